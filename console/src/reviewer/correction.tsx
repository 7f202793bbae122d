import { useEffect, useState } from 'preact/hooks';
import { getJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, formatDate } from '../ui/controls.js';
import { usePolling } from '../ui/polling.js';
import { DecisionForm } from './decision-form.js';

interface Correction {
  id: string;
  state: string;
  memoryId: string;
  dueAt: string;
  eraseInaccurate: boolean;
  correctedId: string | null;
  decidedBy: string | null;
}

/** Corrections waiting for a reviewer (Art. 16), beside the queue: the DPO files them, a reviewer decides. */
export function CorrectionsWaiting(props: { session: Session }) {
  const { data, error } = usePolling(
    () =>
      getJson<{ items: Correction[] }>(props.session, '/subject-rights/rectification').then((r) =>
        r.items.filter((c) => c.state === 'awaiting-review'),
      ),
    4000,
    [props.session],
  );
  return (
    <section aria-labelledby="corrections-heading">
      <h2 id="corrections-heading">Corrections waiting</h2>
      <ErrorNotice error={error} />
      <table>
        <caption>Corrections filed by the DPO, waiting for a reviewer</caption>
        <thead>
          <tr>
            <th scope="col">Request</th>
            <th scope="col">Memory</th>
            <th scope="col">Due</th>
          </tr>
        </thead>
        <tbody>
          {data?.length === 0 && (
            <tr>
              <td colSpan={3}>No correction is waiting.</td>
            </tr>
          )}
          {data?.map((c) => (
            <tr key={c.id} data-correction={c.id}>
              <td>
                <a href={`#/review/corrections/${encodeURIComponent(c.id)}`}>{c.id}</a>
              </td>
              <td>{c.memoryId}</td>
              <td>{formatDate(c.dueAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** One correction: the record as it reads now beside the proposed content, and the decision with a reason. */
export function CorrectionItem(props: { session: Session; id: string }) {
  const path = `/subject-rights/rectification/${encodeURIComponent(props.id)}`;
  const [request, setRequest] = useState<Correction | null>(null);
  const [current, setCurrent] = useState<{ content?: string; status: string } | null>(null);
  const [proposal, setProposal] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<Correction | null>(null);
  useEffect(() => {
    void (async () => {
      try {
        const r = await getJson<Correction>(props.session, path);
        setRequest(r);
        setCurrent(await getJson(props.session, `/memories/${encodeURIComponent(r.memoryId)}`, { intent: 'history' }));
        if (r.state === 'awaiting-review')
          setProposal((await getJson<{ content: string }>(props.session, `${path}/proposal`)).content);
      } catch (e) {
        setError(e);
      }
    })();
  }, [props.session, props.id]);
  return (
    <section aria-labelledby="correction-heading">
      <p>
        <a href="#/review">← Queue</a>
      </p>
      <h2 id="correction-heading">Correction {props.id}</h2>
      <ErrorNotice error={error} />
      {request && (
        <dl class="facts">
          <dt>Memory</dt>
          <dd>{request.memoryId}</dd>
          <dt>Due</dt>
          <dd>{formatDate(request.dueAt)}</dd>
          <dt>If approved</dt>
          <dd>
            {request.eraseInaccurate
              ? 'the old value is erased, with a certificate'
              : 'the old value stays in history, superseded'}
          </dd>
          <dt>Reads now</dt>
          <dd class="content" data-testid="current-content">
            {current?.content ?? '—'}
          </dd>
          <dt>Proposed</dt>
          <dd class="content" data-testid="proposed-content">
            {proposal ?? '—'}
          </dd>
        </dl>
      )}
      {result ? (
        <p class="notice ok" role="status">
          Decided: the correction is {result.state}
          {result.correctedId ? ` (now ${result.correctedId})` : ''}. <a href="#/review">Back to the queue</a>
        </p>
      ) : (
        request?.state === 'awaiting-review' && (
          <DecisionForm
            session={props.session}
            path={`${path}/decision`}
            choices={[
              { label: 'Approve correction', body: { decision: 'approve' } },
              { label: 'Reject correction', body: { decision: 'reject' } },
            ]}
            onDecided={(r) => setResult(r as Correction)}
          />
        )
      )}
    </section>
  );
}
