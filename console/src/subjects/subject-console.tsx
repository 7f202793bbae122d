import { useEffect, useState } from 'preact/hooks';
import { postJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described } from '../ui/controls.js';
import { usePolling } from '../ui/polling.js';
import { go } from '../ui/route.js';
import { HoldingsTable, ReadersTable, loadPreview, type Preview } from '../rights/subject-preview.js';
import { AccessRequests } from '../rights/access-requests.js';
import { Rectifications } from '../rights/rectifications.js';
import { RestrictionForm } from '../rights/restriction-form.js';
import { FileRequest } from '../dpo/file-request.js';
import { handleOf, subjectOf } from './subject-handles.js';
import { SubjectRequestTable } from './subject-request-table.js';
import type { SubjectRequests } from './subject-requests-types.js';

/** The roles the API lets see a subject's page (`POST …/subject-requests` and the preview need `erasure.request`). */
export const SUBJECT_PAGE_ROLES = ['dpo', 'admin'];

/**
 * One page per data subject (`#/subjects`, `#/subjects/{handle}`): the id is typed once, and the page shows what
 * Lethe holds about the subject, who read it, every request about them of every kind, and the rights this token may
 * act on, each filled in with the subject.
 */
export function SubjectConsole(props: { session: Session; route: string[] }) {
  const handle = props.route[1];
  if (!props.session.roles.some((r) => SUBJECT_PAGE_ROLES.includes(r)))
    return (
      <section aria-labelledby="subject-heading">
        <h2 id="subject-heading">Data subjects</h2>
        <p class="notice error" role="alert" data-testid="subject-refusal">
          Not allowed for this token: the data subject page is for the DPO. A {props.session.roles.join(', ')} token may
          not see what Lethe holds about a person or act on their rights (the API answers 403).
        </p>
      </section>
    );
  const subjectId = handle ? subjectOf(handle) : null;
  return (
    <>
      <SubjectIdBox current={subjectId} lost={Boolean(handle) && !subjectId} />
      {subjectId && <SubjectPage key={subjectId} session={props.session} subjectId={subjectId} />}
    </>
  );
}

function SubjectIdBox(props: { current: string | null; lost: boolean }) {
  const [subject, setSubject] = useState(props.current ?? '');
  const [error, setError] = useState<string | undefined>();
  useEffect(() => setSubject(props.current ?? ''), [props.current]);
  const submit = (event: Event) => {
    event.preventDefault();
    if (!subject.trim()) {
      setError('Subject id: required');
      document.getElementById('subject-id')?.focus();
      return;
    }
    setError(undefined);
    go('subjects', handleOf(subject.trim()));
  };
  return (
    <section aria-labelledby="subject-heading">
      <h2 id="subject-heading">Data subject</h2>
      {props.lost && (
        <p class="notice" role="status">
          This link's subject is known only in the tab that opened it (the address never names a person). Type the
          subject id again.
        </p>
      )}
      <form onSubmit={submit} noValidate>
        <Field
          id="subject-id"
          label="Subject id"
          error={error}
          hint="Everything about one person: what Lethe holds, who read it, every request and every right, in one place."
        >
          <input
            {...described('subject-id', error, true)}
            value={subject}
            onInput={(e) => setSubject(e.currentTarget.value)}
            autocomplete="off"
            spellcheck={false}
          />
        </Field>
        <button type="submit">Open subject</button>
      </form>
    </section>
  );
}

function SubjectPage(props: { session: Session; subjectId: string }) {
  const { session, subjectId } = props;
  const [preview, setPreview] = useState<Preview | null>(null);
  const [previewError, setPreviewError] = useState<unknown>(null);
  const [previewTick, setPreviewTick] = useState(0);
  const requests = usePolling(
    () => postJson<SubjectRequests>(session, '/subject-rights/subject-requests', { selector: { subjectId } }),
    2000,
    [session.token, subjectId],
  );
  useEffect(() => {
    let live = true;
    loadPreview(session, subjectId).then(
      (p) => live && (setPreview(p), setPreviewError(null)),
      (e: unknown) => live && setPreviewError(e),
    );
    return () => {
      live = false;
    };
  }, [session.token, subjectId, previewTick]);
  const changed = () => {
    requests.reload();
    setPreviewTick((t) => t + 1);
  };
  const may = requests.data?.may;
  const memoryIds = preview?.ids.located.filter((id) => !id.startsWith('evt_')) ?? [];
  return (
    <div data-testid="subject-page">
      <section aria-labelledby="holds-heading">
        <h2 id="holds-heading">What Lethe holds about {subjectId}</h2>
        <ErrorNotice error={previewError} />
        {preview ? (
          <>
            <HoldingsTable preview={preview} caption="Records about the subject (counts; looking records nothing)" />
            <p class="hint" data-testid="subject-withheld">
              {preview.derived.collateral === 0
                ? 'Nothing derived from these records is about other people: an access package withholds nothing.'
                : `${preview.derived.collateral} derived ${preview.derived.collateral === 1 ? 'record is' : 'records are'} about other people too: an access package withholds ${preview.derived.collateral === 1 ? 'it' : 'them'}; an erasure still reaches ${preview.derived.collateral === 1 ? 'it' : 'them'}.`}
            </p>
          </>
        ) : (
          !previewError && <p>Loading…</p>
        )}
      </section>
      <section aria-labelledby="readers-heading">
        <h2 id="readers-heading">Who read it and when</h2>
        {preview && <ReadersTable preview={preview} />}
      </section>
      <section aria-labelledby="requests-heading">
        <h2 id="requests-heading">Requests about this subject</h2>
        <ErrorNotice error={requests.error} />
        {requests.data && <SubjectRequestTable session={session} requests={requests.data} onChanged={changed} />}
      </section>
      {may && (
        <section aria-labelledby="rights-heading" class="subject-rights">
          <h2 id="rights-heading">Act on a right</h2>
          {!Object.values(may).some(Boolean) && <p>This token may not act on any right for the subject.</p>}
          {may.access && <AccessRequests session={session} subjectId={subjectId} onFiled={changed} />}
          {may.rectification && <Rectifications session={session} memoryIds={memoryIds} onFiled={changed} />}
          {(may.restriction || may.objection) && (
            <RestrictionForm session={session} subjectId={subjectId} onFiled={changed} />
          )}
          {may.erasure && <FileRequest session={session} subjectId={subjectId} onFiled={changed} />}
        </section>
      )}
    </div>
  );
}
