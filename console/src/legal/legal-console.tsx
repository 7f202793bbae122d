import { useState } from 'preact/hooks';
import { ApiError, getJson, postJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described, formatTime } from '../ui/controls.js';
import { splitIds } from '../dpo/selector-form.js';
import { usePolling } from '../ui/polling.js';

interface HoldView {
  id: string;
  scopeKind: string;
  caseRef: string;
  placedBy: string;
  placedAt: string;
  blocks: string[];
}

type ScopeKind = 'subjectId' | 'recordIds' | 'namespace';
const SCOPE_LABELS: Record<ScopeKind, string> = {
  subjectId: 'Data subject',
  recordIds: 'Record ids',
  namespace: 'Namespace',
};

/** The legal role's console: place a hold, see the erasure requests each active hold keeps waiting, release it. */
export function LegalConsole(props: { session: Session }) {
  const { session } = props;
  const [message, setMessage] = useState<string | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const {
    data: holds,
    error,
    reload,
  } = usePolling(() => getJson<{ items: HoldView[] }>(session, '/legal-holds').then((r) => r.items), 3000, [session]);

  const release = async (id: string) => {
    setMessage(null);
    try {
      const r = await postJson<{ resumedRequests: unknown }>(session, `/legal-holds/${encodeURIComponent(id)}/release`);
      const resumed = Array.isArray(r.resumedRequests) ? r.resumedRequests.length : Number(r.resumedRequests) || 0;
      setMessage(`Hold ${id} released; ${resumed} erasure request${resumed === 1 ? '' : 's'} resumed.`);
      reload();
    } catch (e) {
      setFailure(e);
    }
  };

  return (
    <>
      <PlaceHold session={session} onPlaced={(id) => (setMessage(`Hold ${id} placed.`), reload())} />
      <section aria-labelledby="holds-heading">
        <h2 id="holds-heading">Active legal holds</h2>
        <ErrorNotice error={failure ?? error} />
        {message && (
          <p class="notice ok" role="status">
            {message}
          </p>
        )}
        {holds && holds.length === 0 && <p>No active holds.</p>}
        {holds && holds.length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">Hold</th>
                <th scope="col">Scope</th>
                <th scope="col">Case</th>
                <th scope="col">Placed</th>
                <th scope="col">Keeps waiting</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {holds.map((h) => (
                <tr key={h.id} data-hold={h.id}>
                  <td>{h.id}</td>
                  <td>{h.scopeKind}</td>
                  <td>{h.caseRef}</td>
                  <td>
                    {formatTime(h.placedAt)} by {h.placedBy}
                  </td>
                  <td>{h.blocks.length === 0 ? '—' : h.blocks.join(', ')}</td>
                  <td>
                    <button type="button" onClick={() => void release(h.id)} aria-label={`Release hold ${h.id}`}>
                      Release
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

function PlaceHold(props: { session: Session; onPlaced: (id: string) => void }) {
  const [kind, setKind] = useState<ScopeKind>('subjectId');
  const [value, setValue] = useState('');
  const [caseRef, setCaseRef] = useState('');
  const [errors, setErrors] = useState<{ value?: string; caseRef?: string }>({});
  const [failure, setFailure] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setFailure(null);
    const next: typeof errors = {};
    if (!value.trim()) next.value = `${SCOPE_LABELS[kind]}: required`;
    if (!caseRef.trim()) next.caseRef = 'Case reference: required';
    setErrors(next);
    if (Object.keys(next).length) return;
    const scope = kind === 'recordIds' ? { recordIds: splitIds(value) } : { [kind]: value.trim() };
    try {
      const hold = await postJson<{ id: string }>(props.session, '/legal-holds', { scope, caseRef: caseRef.trim() });
      setValue('');
      setCaseRef('');
      props.onPlaced(hold.id);
    } catch (e) {
      if (e instanceof ApiError && e.field?.startsWith('caseRef')) setErrors({ caseRef: e.message });
      else if (e instanceof ApiError && e.field?.startsWith('scope')) setErrors({ value: e.message });
      else setFailure(e);
    }
  };
  return (
    <section aria-labelledby="place-heading">
      <h2 id="place-heading">Place a legal hold</h2>
      <form onSubmit={submit} noValidate>
        <Field id="hold-kind" label="Scope">
          <select id="hold-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as ScopeKind)}>
            {(Object.keys(SCOPE_LABELS) as ScopeKind[]).map((k) => (
              <option key={k} value={k}>
                {SCOPE_LABELS[k]}
              </option>
            ))}
          </select>
        </Field>
        <Field id="hold-value" label={SCOPE_LABELS[kind]} error={errors.value}>
          <input
            {...described('hold-value', errors.value)}
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
            autocomplete="off"
          />
        </Field>
        <Field id="hold-case" label="Case reference" error={errors.caseRef}>
          <input
            {...described('hold-case', errors.caseRef)}
            value={caseRef}
            onInput={(e) => setCaseRef(e.currentTarget.value)}
          />
        </Field>
        <ErrorNotice error={failure} />
        <button type="submit">Place hold</button>
      </form>
    </section>
  );
}
