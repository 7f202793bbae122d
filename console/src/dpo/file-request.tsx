import { useState } from 'preact/hooks';
import { ApiError, postJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described } from '../ui/controls.js';
import { go } from '../ui/route.js';
import { LEGAL_GROUNDS, type ErasureDetail } from './erasure-types.js';
import {
  SELECTOR_KINDS,
  buildFiling,
  formFieldOf,
  type FieldErrors,
  type FilingFields,
  type SelectorKind,
} from './selector-form.js';

const EMPTY: FilingFields = {
  kind: 'subjectId',
  subjectId: '',
  memoryIds: '',
  from: '',
  to: '',
  contentFingerprint: '',
  legalGround: '',
};

/**
 * The DPO files an erasure request: what to erase (one way of naming it) and on which legal ground. On a subject's
 * page (`subjectId`) the subject comes filled in, and `onFiled` is told the new request instead of opening it.
 */
export function FileRequest(props: { session: Session; subjectId?: string; onFiled?: (id: string) => void }) {
  const [fields, setFields] = useState<FilingFields>({ ...EMPTY, subjectId: props.subjectId ?? '' });
  const [errors, setErrors] = useState<FieldErrors>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (name: keyof FilingFields) => (e: { currentTarget: { value: string } }) =>
    setFields({ ...fields, [name]: e.currentTarget.value });

  const submit = async (event: Event) => {
    event.preventDefault();
    setFailure(null);
    const built = buildFiling(fields);
    if ('errors' in built) {
      setErrors(built.errors);
      const first = Object.keys(built.errors)[0];
      if (first) document.getElementById(`filing-${first}`)?.focus();
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      const filed = await postJson<ErasureDetail>(props.session, '/erasure-requests', built.body);
      if (props.onFiled) {
        setFields({ ...EMPTY, subjectId: props.subjectId ?? '' });
        props.onFiled(filed.id);
      } else go('dpo', 'requests', filed.id);
    } catch (error) {
      const field = error instanceof ApiError ? formFieldOf(error.field, fields.kind) : null;
      if (field && error instanceof ApiError) setErrors({ [field]: error.message });
      else setFailure(error);
    } finally {
      setBusy(false);
    }
  };

  const kind = fields.kind;
  const time = kind === 'validTime' || kind === 'transactionTime';
  return (
    <section aria-labelledby="file-heading">
      <h2 id="file-heading">File an erasure request</h2>
      <form onSubmit={submit} noValidate>
        <fieldset>
          <legend>What to erase</legend>
          <div class="choices">
            {(Object.keys(SELECTOR_KINDS) as SelectorKind[]).map((k) => (
              <label key={k} class="choice">
                <input
                  type="radio"
                  name="selector-kind"
                  value={k}
                  checked={kind === k}
                  onChange={() => {
                    setFields({ ...fields, kind: k });
                    setErrors({});
                  }}
                />
                {SELECTOR_KINDS[k]}
              </label>
            ))}
          </div>
          {kind === 'subjectId' && (
            <Field id="filing-subjectId" label="Subject id" error={errors.subjectId}>
              <input
                {...described('filing-subjectId', errors.subjectId)}
                value={fields.subjectId}
                onInput={set('subjectId')}
                autocomplete="off"
              />
            </Field>
          )}
          {kind === 'memoryIds' && (
            <Field
              id="filing-memoryIds"
              label="Memory ids"
              error={errors.memoryIds}
              hint="One or more ids, separated by spaces, commas or lines."
            >
              <textarea
                {...described('filing-memoryIds', errors.memoryIds, true)}
                rows={3}
                value={fields.memoryIds}
                onInput={set('memoryIds')}
              />
            </Field>
          )}
          {time && (
            <div class="row">
              <Field id="filing-from" label="From (UTC)" error={errors.from}>
                <input
                  type="datetime-local"
                  {...described('filing-from', errors.from)}
                  value={fields.from}
                  onInput={set('from')}
                />
              </Field>
              <Field id="filing-to" label="To (UTC)" error={errors.to}>
                <input
                  type="datetime-local"
                  {...described('filing-to', errors.to)}
                  value={fields.to}
                  onInput={set('to')}
                />
              </Field>
            </div>
          )}
          {kind === 'contentFingerprint' && (
            <Field
              id="filing-contentFingerprint"
              label="Content fingerprint (SHA-256)"
              error={errors.contentFingerprint}
            >
              <input
                {...described('filing-contentFingerprint', errors.contentFingerprint)}
                value={fields.contentFingerprint}
                onInput={set('contentFingerprint')}
                autocomplete="off"
                spellcheck={false}
              />
            </Field>
          )}
        </fieldset>
        <Field id="filing-legalGround" label="Legal ground" error={errors.legalGround}>
          <select
            {...described('filing-legalGround', errors.legalGround)}
            value={fields.legalGround}
            onChange={set('legalGround')}
          >
            <option value="">Choose…</option>
            {Object.entries(LEGAL_GROUNDS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <ErrorNotice error={failure} />
        <button type="submit" disabled={busy}>
          {busy ? 'Filing…' : 'File request'}
        </button>
      </form>
    </section>
  );
}
