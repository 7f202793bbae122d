import { useState } from 'preact/hooks';
import { ApiError, getJson, getText, postJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described, download, formatDate, formatTime } from '../ui/controls.js';
import { usePolling } from '../ui/polling.js';
import type { AccessRequestView } from '../../../src/shared/api-contract/access.js';

/** An access request as the API answers it. */
type AccessRequest = AccessRequestView;

/** Saves an access request's signed package (every download is audited by the API). */
export async function downloadAccessPackage(session: Session, id: string): Promise<void> {
  const text = await getText(session, `/subject-rights/access/${encodeURIComponent(id)}/package`);
  download(`${id}.json`, text);
}

/**
 * Access and portability (Art. 15, 20): file for a subject, watch the package being built, download it signed. On a
 * subject's page (`subjectId`) the field comes filled in and the subject's own list shows the requests instead.
 */
export function AccessRequests(props: { session: Session; subjectId?: string; onFiled?: () => void }) {
  const [subject, setSubject] = useState(props.subjectId ?? '');
  const listed = props.subjectId === undefined;
  const [error, setError] = useState<string | undefined>();
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const list = usePolling(
    async () => (listed ? getJson<{ items: AccessRequest[] }>(props.session, '/subject-rights/access') : null),
    2000,
    [props.session.token, listed],
  );

  const submit = async (event: Event) => {
    event.preventDefault();
    setFailure(null);
    if (!subject.trim()) {
      setError('Subject id: required');
      document.getElementById('access-subjectId')?.focus();
      return;
    }
    setError(undefined);
    setBusy(true);
    try {
      // One key per filing made here: a retried click, or a resend after a closed connection, files nothing twice.
      const requestKey = crypto.randomUUID();
      await postJson(
        props.session,
        '/subject-rights/access',
        { selector: { subjectId: subject.trim() }, requestKey },
        requestKey,
      );
      setSubject(props.subjectId ?? '');
      list.reload();
      props.onFiled?.();
    } catch (e) {
      if (e instanceof ApiError && e.field?.startsWith('selector')) setError(e.message);
      else setFailure(e);
    } finally {
      setBusy(false);
    }
  };

  const fetchPackage = async (id: string) => {
    setFailure(null);
    try {
      await downloadAccessPackage(props.session, id);
      list.reload();
    } catch (e) {
      setFailure(e);
    }
  };

  return (
    <section aria-labelledby="access-heading">
      <h2 id="access-heading">Access requests</h2>
      <form onSubmit={submit} noValidate>
        <Field
          id="access-subjectId"
          label="Subject id for an access request"
          error={error}
          hint="A signed package of everything Lethe holds about the subject, with who read it."
        >
          <input
            {...described('access-subjectId', error, true)}
            value={subject}
            onInput={(e) => setSubject(e.currentTarget.value)}
            autocomplete="off"
          />
        </Field>
        <ErrorNotice error={failure ?? list.error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Filing…' : 'File access request'}
        </button>
      </form>
      {listed && (
        <table>
          <caption>Access requests, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Request</th>
              <th scope="col">State</th>
              <th scope="col">Due</th>
              <th scope="col">Records</th>
              <th scope="col">Package</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.items.length === 0 && (
              <tr>
                <td colSpan={5}>No access request yet.</td>
              </tr>
            )}
            {list.data?.items.map((r) => (
              <tr key={r.id} data-access={r.id}>
                <td>{r.id}</td>
                <td data-testid="access-state">{r.state}</td>
                <td>{formatDate(r.dueAt)}</td>
                <td>{(r.counts.events ?? 0) + (r.counts.memories ?? 0)}</td>
                <td>
                  {r.state === 'ready' ? (
                    <button type="button" class="secondary" onClick={() => void fetchPackage(r.id)}>
                      Download package {r.id}
                    </button>
                  ) : (
                    '—'
                  )}
                  {r.expiresAt && <span class="hint"> until {formatTime(r.expiresAt)}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
