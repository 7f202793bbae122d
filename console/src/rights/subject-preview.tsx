import { useState } from 'preact/hooks';
import { ApiError, postJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described, formatTime } from '../ui/controls.js';

/** What `POST …/subject-rights/preview` answers: counts and ids only. */
export interface Preview {
  located: { events: number; memories: number };
  derived: { total: number; collateral: number };
  memoriesByStatus: Record<string, number>;
  held: { records: number; holdIds: string[] };
  readers: { principal: string; retrievals: number; prompts: number; lastRetrievedAt: string }[];
  ids: { located: string[]; derived: string[]; held: string[]; truncated: boolean };
}

/** The preview of one subject: it fences and records nothing. */
export function loadPreview(session: Session, subjectId: string): Promise<Preview> {
  return postJson<Preview>(session, '/subject-rights/preview', { selector: { subjectId } });
}

/** What a request about this subject would reach if filed now: counts and ids, nothing fenced or recorded. */
export function SubjectPreview(props: { session: Session }) {
  const [subject, setSubject] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [failure, setFailure] = useState<unknown>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setFailure(null);
    setPreview(null);
    if (!subject.trim()) {
      setError('Subject id: required');
      document.getElementById('preview-subjectId')?.focus();
      return;
    }
    setError(undefined);
    setBusy(true);
    try {
      setPreview(await loadPreview(props.session, subject.trim()));
    } catch (e) {
      if (e instanceof ApiError && e.field?.startsWith('selector')) setError(e.message);
      else setFailure(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="preview-heading">
      <h2 id="preview-heading">What Lethe holds about a subject</h2>
      <form onSubmit={submit} noValidate>
        <Field id="preview-subjectId" label="Subject id" error={error}>
          <input
            {...described('preview-subjectId', error)}
            value={subject}
            onInput={(e) => setSubject(e.currentTarget.value)}
            autocomplete="off"
          />
        </Field>
        <ErrorNotice error={failure} />
        <button type="submit" disabled={busy}>
          {busy ? 'Looking…' : 'Preview'}
        </button>
      </form>
      {preview && (
        <div data-testid="preview">
          <HoldingsTable
            preview={preview}
            caption="Reached if a request were filed now (counts; nothing was recorded)"
          />
          <ReadersTable preview={preview} />
        </div>
      )}
    </section>
  );
}

/** What Lethe holds about the subject, by kind and status, what holds keep, and what lineage derived from it. */
export function HoldingsTable(props: { preview: Preview; caption: string }) {
  const { preview } = props;
  return (
    <table>
      <caption>{props.caption}</caption>
      <tbody>
        <tr>
          <th scope="row">Located</th>
          <td data-testid="preview-located">
            {preview.located.events} events, {preview.located.memories} memories
          </td>
        </tr>
        <tr>
          <th scope="row">Derived by lineage</th>
          <td data-testid="preview-derived">
            {preview.derived.total} (about other subjects: {preview.derived.collateral})
          </td>
        </tr>
        <tr>
          <th scope="row">Memories by status</th>
          <td>
            {Object.entries(preview.memoriesByStatus)
              .map(([status, n]) => `${status} ${n}`)
              .join(', ') || '—'}
          </td>
        </tr>
        <tr>
          <th scope="row">Held</th>
          <td data-testid="preview-held">
            {preview.held.records} records
            {preview.held.holdIds.length > 0 ? ` (holds ${preview.held.holdIds.join(', ')})` : ''}
          </td>
        </tr>
      </tbody>
    </table>
  );
}

/** The principals that read the subject's records (exposure tracing): how often, whether in prompts, and when last. */
export function ReadersTable(props: { preview: Preview }) {
  const { preview } = props;
  return (
    <table>
      <caption>Who read these records</caption>
      <thead>
        <tr>
          <th scope="col">Principal</th>
          <th scope="col">Retrievals</th>
          <th scope="col">In prompts</th>
          <th scope="col">Last read</th>
        </tr>
      </thead>
      <tbody>
        {preview.readers.length === 0 && (
          <tr>
            <td colSpan={4}>Nobody has read them.</td>
          </tr>
        )}
        {preview.readers.map((r) => (
          <tr key={r.principal} data-reader={r.principal}>
            <td>{r.principal}</td>
            <td>{r.retrievals}</td>
            <td>{r.prompts}</td>
            <td>{formatTime(r.lastRetrievedAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
