import { useState } from 'preact/hooks';
import { ApiError, postJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described } from '../ui/controls.js';
import { splitIds } from '../dpo/selector-form.js';
import {
  GROUND_EXPLANATIONS,
  OBJECTION_GROUNDS,
  RESTRICTION_GROUNDS,
  type RestrictionView,
} from '../../../src/shared/api-contract/restriction.js';

type Kind = 'restriction' | 'objection';
type Errors = Partial<Record<'legalGround' | 'purposes' | 'reason', string>>;

const KINDS: Record<Kind, { label: string; hint: string; grounds: readonly string[] }> = {
  restriction: {
    label: 'Restrict all processing (Art. 18)',
    hint: "From filing, no agent reads the subject's records for any purpose; duty reads (review, erasure, access, holds, audit) still see them, marked.",
    grounds: RESTRICTION_GROUNDS,
  },
  objection: {
    label: 'Object to named purposes (Art. 21)',
    hint: "From filing, no agent reads the subject's records for the purposes named; other purposes still read them.",
    grounds: OBJECTION_GROUNDS,
  },
};

/** The form field an API error's `field` points at (`purposes.0` is the purposes field). */
function fieldOf(apiField: string | null): keyof Errors | null {
  if (apiField === 'legalGround' || apiField === 'reason') return apiField;
  if (apiField?.startsWith('purposes')) return 'purposes';
  return null;
}

/**
 * Restriction of processing (Art. 18) or objection to purposes (Art. 21) for one subject, as the DPO files it: the
 * grounds the API accepts for each kind, each with what it means, and the reason (the API keeps only its keyed hash).
 */
export function RestrictionForm(props: { session: Session; subjectId: string; onFiled: (r: RestrictionView) => void }) {
  const [kind, setKind] = useState<Kind>('restriction');
  const [ground, setGround] = useState('');
  const [purposes, setPurposes] = useState('');
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<Errors>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setFailure(null);
    setDone(null);
    const found: Errors = {};
    if (!ground) found.legalGround = 'Legal ground: choose the ground the subject relies on';
    const named = splitIds(purposes);
    if (kind === 'objection' && named.length === 0) found.purposes = 'Purposes: name at least one purpose objected to';
    if (!reason.trim()) found.reason = 'Reason: required — say why, in your words';
    setErrors(found);
    const first = Object.keys(found)[0];
    if (first) {
      document
        .getElementById(first === 'legalGround' ? `restrict-ground-${KINDS[kind].grounds[0]}` : `restrict-${first}`)
        ?.focus();
      return;
    }
    setBusy(true);
    try {
      // One key per filing made here: a resend after a closed connection files nothing twice.
      const requestKey = crypto.randomUUID();
      const filed = await postJson<RestrictionView>(
        props.session,
        '/subject-rights/restrictions',
        {
          selector: { subjectId: props.subjectId },
          legalGround: ground,
          reason: reason.trim(),
          ...(kind === 'objection' ? { purposes: named } : {}),
          requestKey,
        },
        requestKey,
      );
      setGround('');
      setPurposes('');
      setReason('');
      setDone(`Filed ${kind} ${filed.id}: the requests above show whether it is in force.`);
      props.onFiled(filed);
    } catch (e) {
      const field = e instanceof ApiError ? fieldOf(e.field) : null;
      if (field && e instanceof ApiError) setErrors({ [field]: e.message });
      else setFailure(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="restrict-heading">
      <h3 id="restrict-heading">Restrict processing or object to purposes</h3>
      <form onSubmit={submit} noValidate data-testid="restriction-form">
        <fieldset>
          <legend>What the subject asks</legend>
          {(Object.keys(KINDS) as Kind[]).map((k) => (
            <label key={k} class="choice">
              <input
                type="radio"
                name="restrict-kind"
                value={k}
                checked={kind === k}
                onChange={() => {
                  setKind(k);
                  setGround('');
                  setErrors({});
                }}
              />
              {KINDS[k].label}
            </label>
          ))}
          <p class="hint">{KINDS[kind].hint}</p>
        </fieldset>
        <fieldset
          class={errors.legalGround ? 'invalid' : undefined}
          aria-describedby={errors.legalGround ? 'restrict-legalGround-error' : undefined}
        >
          <legend>Legal ground</legend>
          {KINDS[kind].grounds.map((g) => {
            const explained = GROUND_EXPLANATIONS[g as keyof typeof GROUND_EXPLANATIONS];
            return (
              <div key={g} class="ground">
                <input
                  type="radio"
                  id={`restrict-ground-${g}`}
                  name="restrict-ground"
                  value={g}
                  checked={ground === g}
                  onChange={() => setGround(g)}
                  aria-describedby={`restrict-ground-${g}-when`}
                />
                <label for={`restrict-ground-${g}`}>{explained.article}</label>
                <p class="hint" id={`restrict-ground-${g}-when`}>
                  {explained.when}
                </p>
              </div>
            );
          })}
          {errors.legalGround && (
            <p class="field-error" id="restrict-legalGround-error">
              {errors.legalGround}
            </p>
          )}
        </fieldset>
        {kind === 'objection' && (
          <Field
            id="restrict-purposes"
            label="Purposes objected to"
            error={errors.purposes}
            hint="The read purposes, separated by spaces or commas (e.g. personalisation, marketing). Duty purposes (review, erasure, access-request, legal-hold, audit) cannot be objected to."
          >
            <input
              {...described('restrict-purposes', errors.purposes, true)}
              value={purposes}
              onInput={(e) => setPurposes(e.currentTarget.value)}
              autocomplete="off"
              spellcheck={false}
            />
          </Field>
        )}
        <Field
          id="restrict-reason"
          label="Reason"
          error={errors.reason}
          hint="Why, in your words. Lethe keeps only a keyed hash of it."
        >
          <textarea
            {...described('restrict-reason', errors.reason, true)}
            rows={2}
            value={reason}
            onInput={(e) => setReason(e.currentTarget.value)}
          />
        </Field>
        <ErrorNotice error={failure} />
        {done && (
          <p class="notice ok" role="status">
            {done}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Filing…' : kind === 'restriction' ? 'File restriction' : 'File objection'}
        </button>
      </form>
    </section>
  );
}

/** Lifting a restriction or objection: agents read the subject's records again, so the DPO says why. */
export function LiftRestriction(props: { session: Session; restriction: RestrictionView; onLifted: () => void }) {
  const { restriction } = props;
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [failure, setFailure] = useState<unknown>(null);
  const id = `lift-reason-${restriction.id}`;
  const noun = restriction.kind === 'restriction' ? 'restriction' : 'objection';
  if (!open)
    return (
      <button type="button" class="secondary" onClick={() => setOpen(true)}>
        Lift {noun} {restriction.id}
      </button>
    );
  const submit = async (event: Event) => {
    event.preventDefault();
    setFailure(null);
    if (!reason.trim()) {
      setError('Reason: required — say why agents may read the records again');
      document.getElementById(id)?.focus();
      return;
    }
    setError(undefined);
    try {
      await postJson(props.session, `/subject-rights/restrictions/${encodeURIComponent(restriction.id)}/lift`, {
        reason: reason.trim(),
      });
      props.onLifted();
    } catch (e) {
      if (e instanceof ApiError && e.field === 'reason') setError(e.message);
      else setFailure(e);
    }
  };
  return (
    <form onSubmit={submit} noValidate class="lift">
      <Field
        id={id}
        label={`Reason for lifting ${restriction.id}`}
        error={error}
        hint="Agents read the subject's records again from the lift: tell the subject beforehand (Art. 18(3))."
      >
        <input
          {...described(id, error, true)}
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
          autocomplete="off"
        />
      </Field>
      <ErrorNotice error={failure} />
      <button type="submit">Lift {noun}</button>
    </form>
  );
}
