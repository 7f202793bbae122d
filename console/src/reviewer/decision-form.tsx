import { useState } from 'preact/hooks';
import { ApiError, postJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described } from '../ui/controls.js';

export interface Choice {
  label: string;
  body: Record<string, unknown>;
}

/** A decision with a reason; a refusal (e.g. a writer deciding on their own write) is shown as the API words it. */
export function DecisionForm(props: {
  session: Session;
  path: string;
  choices: Choice[];
  onDecided: (result: unknown) => void;
}) {
  const [reason, setReason] = useState('');
  const [reasonError, setReasonError] = useState<string | undefined>();
  const [failure, setFailure] = useState<unknown>(null);
  const decide = async (choice: Choice) => {
    setFailure(null);
    if (!reason.trim()) return setReasonError('Reason: required — say why');
    setReasonError(undefined);
    try {
      props.onDecided(await postJson(props.session, props.path, { ...choice.body, reason: reason.trim() }));
    } catch (e) {
      if (e instanceof ApiError && e.field === 'reason') setReasonError(e.message);
      else setFailure(e);
    }
  };
  return (
    <form onSubmit={(e) => e.preventDefault()} noValidate>
      <Field id="decision-reason" label="Reason" error={reasonError}>
        <textarea
          {...described('decision-reason', reasonError)}
          rows={2}
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </Field>
      <div class="row">
        {props.choices.map((c) => (
          <button key={c.label} type="button" onClick={() => void decide(c)}>
            {c.label}
          </button>
        ))}
      </div>
      <ErrorNotice error={failure} />
    </form>
  );
}
