import { useEffect, useState } from 'preact/hooks';
import { getJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, formatTime } from '../ui/controls.js';
import { DecisionForm } from './decision-form.js';
import type { DisputeRecord, DisputeView, Evidence, SignOffItem, WithheldRecord } from './review-types.js';

function EvidenceList(props: { e: Evidence }) {
  const { evidence, writtenBy, content } = props.e;
  return (
    <dl class="facts">
      <dt>Written by</dt>
      <dd>{writtenBy}</dd>
      <dt>Evidence events</dt>
      <dd>{evidence.eventIds.join(', ') || '—'}</dd>
      <dt>Derived from</dt>
      <dd>{evidence.parentIds.join(', ') || '—'}</dd>
      <dt>Rule</dt>
      <dd>{evidence.derivationRule}</dd>
      {content !== undefined && (
        <>
          <dt>Content</dt>
          <dd class="content">{content}</dd>
        </>
      )}
    </dl>
  );
}

function Decided(props: { result: unknown }) {
  const r = props.result as { status?: string; outcome?: string } | null;
  return (
    <p class="notice ok" role="status">
      Decided{r?.status ? `: the record is now ${r.status}` : ''}. <a href="#/review">Back to the queue</a>
    </p>
  );
}

export function SignOff(props: { session: Session; id: string }) {
  const [item, setItem] = useState<SignOffItem | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<unknown>(null);
  useEffect(() => {
    getJson<SignOffItem>(props.session, `/review-queue/${encodeURIComponent(props.id)}`)
      .then(setItem)
      .catch(setError);
  }, [props.session, props.id]);
  return (
    <section aria-labelledby="item-heading">
      <p>
        <a href="#/review">← Queue</a>
      </p>
      <h2 id="item-heading">Sign-off {props.id}</h2>
      <ErrorNotice error={error} />
      {item && (
        <>
          <dl class="facts">
            <dt>Kind</dt>
            <dd>{item.kind}</dd>
            <dt>Namespace</dt>
            <dd>{item.namespace}</dd>
            <dt>Policy reason</dt>
            <dd>{item.policyReason ?? '—'}</dd>
          </dl>
          <EvidenceList e={item} />
          {result ? (
            <Decided result={result} />
          ) : (
            <DecisionForm
              session={props.session}
              path={`/review-queue/${encodeURIComponent(props.id)}/decision`}
              choices={[
                { label: 'Approve', body: { decision: 'approve' } },
                { label: 'Reject', body: { decision: 'reject' } },
              ]}
              onDecided={setResult}
            />
          )}
        </>
      )}
    </section>
  );
}

function RecordCard(props: { r: DisputeRecord | WithheldRecord }) {
  const { r } = props;
  if (r.view === 'withheld')
    return (
      <article class="card" aria-label={`Record ${r.id}`} data-record={r.id}>
        <h3>{r.id}</h3>
        <p>Not available to you.</p>
      </article>
    );
  return (
    <article class="card" aria-label={`Record ${r.id}`} data-record={r.id}>
      <h3>{r.id}</h3>
      <dl class="facts">
        <dt>Status</dt>
        <dd>{r.status}</dd>
        <dt>Valid</dt>
        <dd>
          {formatTime(r.validFrom)} → {r.validTo ? formatTime(r.validTo) : 'open'}
        </dd>
        <dt>Trust</dt>
        <dd>
          tier {r.trustTier}, confidence {r.confidence}
        </dd>
      </dl>
      <EvidenceList e={r} />
    </article>
  );
}

export function Dispute(props: { session: Session; id: string }) {
  const [dispute, setDispute] = useState<DisputeView | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<unknown>(null);
  useEffect(() => {
    getJson<DisputeView>(props.session, `/disputes/${encodeURIComponent(props.id)}`)
      .then(setDispute)
      .catch(setError);
  }, [props.session, props.id, result]);
  const [a, b] = dispute?.records ?? [];
  return (
    <section aria-labelledby="dispute-heading">
      <p>
        <a href="#/review">← Queue</a>
      </p>
      <h2 id="dispute-heading">Dispute {props.id}</h2>
      <ErrorNotice error={error} />
      {dispute && (
        <>
          <p>
            State <span class="state">{dispute.state}</span> · namespace {dispute.namespace} · opened{' '}
            {formatTime(dispute.openedAt)}
          </p>
          <div class="side-by-side">
            {dispute.records.map((r) => (
              <RecordCard key={r.id} r={r} />
            ))}
          </div>
          {result ? (
            <Decided result={result} />
          ) : (
            a &&
            b && (
              <DecisionForm
                session={props.session}
                path={`/disputes/${encodeURIComponent(props.id)}/resolution`}
                choices={[
                  { label: `Keep ${a.id}`, body: { outcome: 'keep-one', memoryId: a.id } },
                  { label: `Keep ${b.id}`, body: { outcome: 'keep-one', memoryId: b.id } },
                  { label: 'Keep both', body: { outcome: 'keep-both' } },
                  { label: `Reject ${a.id}`, body: { outcome: 'reject-one', memoryId: a.id } },
                  { label: `Reject ${b.id}`, body: { outcome: 'reject-one', memoryId: b.id } },
                ]}
                onDecided={setResult}
              />
            )
          )}
        </>
      )}
    </section>
  );
}
