import { useEffect, useState } from 'preact/hooks';
import { ApiError, getText, getJson, postJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described, download, formatDate, formatTime } from '../ui/controls.js';
import { LEGAL_GROUNDS, SETTLED, STEPS, type ErasureDetail } from './erasure-types.js';
import { isErasureFinished } from '../../../src/shared/erasure-finished.js';

const POLL_MS = 1000;

/** One request's timeline, polled while it runs, with its certificates and the deadline extension. */
export function RequestDetail(props: { session: Session; id: string }) {
  const { session, id } = props;
  const [request, setRequest] = useState<ErasureDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const r = await getJson<ErasureDetail>(session, `/erasure-requests/${encodeURIComponent(id)}`);
        if (!live) return;
        setRequest(r);
        setError(null);
        // Live progress: poll until the request settles (a partial one waits on a hold: slower).
        if (!SETTLED.has(r.state)) timer = setTimeout(() => void load(), r.state === 'partial' ? POLL_MS * 3 : POLL_MS);
      } catch (e) {
        if (live) setError(e);
      }
    };
    void load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [session, id, tick]);

  if (!request) return error ? <ErrorNotice error={error} /> : <p>Loading…</p>;
  const byStep = new Map(request.steps.map((s) => [s.step, s]));
  const { purged, total } = request.progress;
  return (
    <section aria-labelledby="detail-heading">
      <p>
        <a href="#/dpo">← All requests</a>
      </p>
      <h2 id="detail-heading">Request {request.id}</h2>
      <ErrorNotice error={error} />
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <span class={`state state-${request.state}`} data-testid="request-state" aria-live="polite">
            {request.state}
          </span>
        </dd>
        <dt>Legal ground</dt>
        <dd>{LEGAL_GROUNDS[request.legalGround] ?? request.legalGround}</dd>
        <dt>Selector</dt>
        <dd>
          {request.selectorKind} <span class="muted">(keyed hash {request.selectorHash.slice(0, 12)}…)</span>
        </dd>
        <dt>Received</dt>
        <dd>{formatTime(request.receivedAt)}</dd>
        <dt>Due (GDPR)</dt>
        <dd>
          {formatDate(request.dueAt)}
          {request.extensionMonths > 0 && <span class="flag extended">extended +{request.extensionMonths} mo</span>}
        </dd>
        {request.holdIds.length > 0 && (
          <>
            <dt>Legal holds</dt>
            <dd>{request.holdIds.join(', ')}</dd>
          </>
        )}
        {request.note && (
          <>
            <dt>Note</dt>
            <dd>{request.note}</dd>
          </>
        )}
      </dl>
      <h3>Steps</h3>
      <ol class="timeline">
        {STEPS.map((step) => {
          const s = byStep.get(step);
          const state = s?.state ?? 'pending';
          return (
            <li key={step} class={`step step-${state}`} data-step={step} data-state={state}>
              <span class="step-name">{step}</span> <span class="step-state">{state}</span>
              {s && Object.keys(s.counts).length > 0 && (
                <span class="counts">
                  {Object.entries(s.counts)
                    .map(([k, v]) => `${k} ${v}`)
                    .join(' · ')}
                </span>
              )}
              {s?.finishedAt && <span class="muted"> {formatTime(s.finishedAt)}</span>}
            </li>
          );
        })}
      </ol>
      <label for="purge-progress">
        Purge progress: {purged} of {total}
      </label>
      <progress id="purge-progress" max={Math.max(total, 1)} value={purged} />
      {(request.findings ?? []).length > 0 && (
        <Findings
          session={session}
          id={request.id}
          findings={request.findings ?? []}
          deciding={request.state === 'needs-dpo'}
          onDecided={() => setTick(tick + 1)}
        />
      )}
      <Certificates session={session} ids={request.certificateIds} />
      {!isErasureFinished(request.state) && (
        <Extension session={session} id={request.id} onExtended={() => setTick(tick + 1)} />
      )}
    </section>
  );
}

/** Copies of erased content under other ids: the DPO erases them too, or certifies with them named. */
function Findings(props: {
  session: Session;
  id: string;
  findings: NonNullable<ErasureDetail['findings']>;
  deciding: boolean;
  onDecided: () => void;
}) {
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<{ reason?: string }>({});
  const [failure, setFailure] = useState<unknown>(null);
  const decide = async (decision: 'extend' | 'certify') => {
    setFailure(null);
    if (!reason.trim()) return setErrors({ reason: 'Reason: required — say why you decide so' });
    setErrors({});
    try {
      await postJson(props.session, `/erasure-requests/${encodeURIComponent(props.id)}/findings`, {
        decision,
        reason: reason.trim(),
      });
      props.onDecided();
    } catch (e) {
      if (e instanceof ApiError && e.field === 'reason') setErrors({ reason: e.message });
      else setFailure(e);
    }
  };
  return (
    <section aria-labelledby="findings-heading" class="findings">
      <h3 id="findings-heading">Copies found outside the request</h3>
      <p>
        After the purge, these records still carried erased content under other ids. Nothing is certified until you
        decide.
      </p>
      <ul data-testid="findings">
        {props.findings.map((f) => (
          <li key={f.id} data-finding={f.id} data-resolution={f.resolution}>
            {f.id}{' '}
            <span class="muted">
              ({f.kind}; found by {f.probes.join(', ')})
            </span>{' '}
            — {f.resolution}
          </li>
        ))}
      </ul>
      {props.deciding && (
        <form onSubmit={(e) => e.preventDefault()} noValidate>
          <Field id="findings-reason" label="Reason" error={errors.reason}>
            <input
              {...described('findings-reason', errors.reason)}
              value={reason}
              onInput={(e) => setReason(e.currentTarget.value)}
            />
          </Field>
          <ErrorNotice error={failure} />
          <button type="button" onClick={() => void decide('extend')}>
            Erase the copies too
          </button>{' '}
          <button type="button" onClick={() => void decide('certify')}>
            Certify with the copies stated
          </button>
        </form>
      )}
    </section>
  );
}

function Certificates(props: { session: Session; ids: string[] }) {
  const [error, setError] = useState<unknown>(null);
  if (props.ids.length === 0) return <p>No certificate yet.</p>;
  const save = async (certificateId: string) => {
    try {
      const text = await getText(props.session, `/certificates/${encodeURIComponent(certificateId)}`);
      download(`${certificateId}.json`, text);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <>
      <h3>Certificates</h3>
      <ul class="certificates">
        {props.ids.map((c) => (
          <li key={c}>
            <button type="button" onClick={() => void save(c)}>
              Download certificate {c}
            </button>
          </li>
        ))}
      </ul>
      <ErrorNotice error={error} />
    </>
  );
}

function Extension(props: { session: Session; id: string; onExtended: () => void }) {
  const [months, setMonths] = useState('1');
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<{ months?: string; reason?: string }>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setFailure(null);
    if (!reason.trim()) return setErrors({ reason: 'Reason: required — say why the request needs more time' });
    setErrors({});
    try {
      const r = await postJson<{ dueAt: string }>(
        props.session,
        `/erasure-requests/${encodeURIComponent(props.id)}/extension`,
        {
          months: Number(months),
          reason: reason.trim(),
        },
      );
      setDone(`Extended: now due ${formatDate(r.dueAt)}.`);
      props.onExtended();
    } catch (e) {
      if (e instanceof ApiError && (e.field === 'months' || e.field === 'reason')) setErrors({ [e.field]: e.message });
      else setFailure(e);
    }
  };
  return (
    <form onSubmit={submit} noValidate class="extension">
      <h3>Extend the deadline</h3>
      <div class="row">
        <Field id="ext-months" label="Months" error={errors.months}>
          <select
            {...described('ext-months', errors.months)}
            value={months}
            onChange={(e) => setMonths(e.currentTarget.value)}
          >
            <option value="1">1</option>
            <option value="2">2</option>
          </select>
        </Field>
        <Field id="ext-reason" label="Reason" error={errors.reason}>
          <input
            {...described('ext-reason', errors.reason)}
            value={reason}
            onInput={(e) => setReason(e.currentTarget.value)}
          />
        </Field>
      </div>
      <ErrorNotice error={failure} />
      {done && <p class="notice ok">{done}</p>}
      <button type="submit">Extend</button>
    </form>
  );
}
