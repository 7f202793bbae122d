import { useState } from 'preact/hooks';
import { ApiError, getJson, postJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described, formatDate } from '../ui/controls.js';
import { usePolling } from '../ui/polling.js';

interface Rectification {
  id: string;
  state: string;
  memoryId: string;
  eraseInaccurate: boolean;
  dueAt: string;
  decidedBy: string | null;
  correctedId: string | null;
  derived: { stale: string[]; erased: string[] };
  erasureRequestId: string | null;
}

type Errors = Partial<Record<'memoryId' | 'content', string>>;

/**
 * Rectification (Art. 16): correct one memory; a reviewer decides, and the list shows what became of it. On a
 * subject's page the subject's memories are offered for the id (`memoryIds`) and the subject's own list shows the
 * requests instead.
 */
export function Rectifications(props: { session: Session; memoryIds?: string[]; onFiled?: () => void }) {
  const listed = props.memoryIds === undefined;
  const [memoryId, setMemoryId] = useState('');
  const [content, setContent] = useState('');
  const [erase, setErase] = useState(false);
  const [errors, setErrors] = useState<Errors>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const list = usePolling(
    async () => (listed ? getJson<{ items: Rectification[] }>(props.session, '/subject-rights/rectification') : null),
    2000,
    [props.session.token, listed],
  );

  const submit = async (event: Event) => {
    event.preventDefault();
    setFailure(null);
    const found: Errors = {};
    if (!memoryId.trim()) found.memoryId = 'Memory id: required';
    if (!content.trim()) found.content = 'Corrected content: required';
    setErrors(found);
    const first = Object.keys(found)[0];
    if (first) {
      document.getElementById(`rectify-${first}`)?.focus();
      return;
    }
    setBusy(true);
    try {
      // Filing again under the same key returns the same request: safe to resend after a closed connection.
      const requestKey = crypto.randomUUID();
      await postJson(
        props.session,
        '/subject-rights/rectification',
        { requestKey, memoryId: memoryId.trim(), content, eraseInaccurate: erase },
        requestKey,
      );
      setMemoryId('');
      setContent('');
      setErase(false);
      list.reload();
      props.onFiled?.();
    } catch (e) {
      if (e instanceof ApiError && (e.field === 'memoryId' || e.field === 'content'))
        setErrors({ [e.field]: e.message });
      else setFailure(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="rectify-heading">
      <h2 id="rectify-heading">Corrections</h2>
      <form onSubmit={submit} noValidate>
        <Field id="rectify-memoryId" label="Memory id to correct" error={errors.memoryId}>
          <input
            {...described('rectify-memoryId', errors.memoryId)}
            value={memoryId}
            onInput={(e) => setMemoryId(e.currentTarget.value)}
            autocomplete="off"
            spellcheck={false}
            type="text"
            list={props.memoryIds ? 'rectify-subject-memories' : undefined}
          />
        </Field>
        {props.memoryIds && (
          <datalist id="rectify-subject-memories">
            {props.memoryIds.map((id) => (
              <option key={id} value={id} />
            ))}
          </datalist>
        )}
        <Field
          id="rectify-content"
          label="Corrected content"
          error={errors.content}
          hint="From filing, the old value is no longer served as current; a reviewer decides."
        >
          <textarea
            {...described('rectify-content', errors.content, true)}
            rows={3}
            value={content}
            onInput={(e) => setContent(e.currentTarget.value)}
          />
        </Field>
        <label class="choice">
          <input type="checkbox" checked={erase} onChange={(e) => setErase(e.currentTarget.checked)} />
          Erase the inaccurate value (with a certificate) instead of keeping it in history
        </label>
        <ErrorNotice error={failure ?? list.error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Filing…' : 'File correction'}
        </button>
      </form>
      {listed && (
        <table>
          <caption>Corrections, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Request</th>
              <th scope="col">Memory</th>
              <th scope="col">State</th>
              <th scope="col">Due</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.items.length === 0 && (
              <tr>
                <td colSpan={5}>No correction yet.</td>
              </tr>
            )}
            {list.data?.items.map((r) => (
              <tr key={r.id} data-rectification={r.id}>
                <td>{r.id}</td>
                <td>{r.memoryId}</td>
                <td data-testid="rectification-state">{r.state}</td>
                <td>{formatDate(r.dueAt)}</td>
                <td>
                  {r.correctedId ? `now ${r.correctedId}` : '—'}
                  {r.decidedBy ? ` · decided by ${r.decidedBy}` : ''}
                  {r.derived.stale.length > 0 ? ` · ${r.derived.stale.length} derived flagged stale` : ''}
                  {r.erasureRequestId ? ` · erasure ${r.erasureRequestId}` : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
