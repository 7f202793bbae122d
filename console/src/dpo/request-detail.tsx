import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, getText, getJson, postJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described, download, formatDate, formatTime } from '../ui/controls.js';
import { LEGAL_GROUNDS, SETTLED, STEPS, type ErasureDetail } from './erasure-types.js';
import { isErasureFinished } from '../../../src/shared/erasure-finished.js';
import { count, stepSentence } from './step-sentences.js';

const POLL_MS = 1000;

/** Each step's name as the DPO reads it (the workflow's own name stays in the operators' details). */
const STEP_NAMES: Record<(typeof STEPS)[number], string> = {
  locate: 'Find the records',
  closure: 'Follow what was derived from them',
  authorise: 'Check the policy and legal holds',
  tombstone: 'Stop serving them',
  purge: 'Delete them',
  expunge: 'Compact the search index',
  verify: 'Check nothing is left',
};

/** One request's timeline, polled while it runs, with its certificates and the deadline extension. */
export function RequestDetail(props: { session: Session; id: string }) {
  const { session, id } = props;
  const [request, setRequest] = useState<ErasureDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  // A decision on copies is sent: the request stays at needs-dpo until the workflow takes it up, so keep following.
  const decided = useRef(false);

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
        if (r.state !== 'needs-dpo') decided.current = false;
        if (!SETTLED.has(r.state) || decided.current)
          timer = setTimeout(() => void load(), r.state === 'partial' ? POLL_MS * 3 : POLL_MS);
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
          const sentence = s?.state === 'done' ? stepSentence(step, s.counts, request.holdIds) : null;
          return (
            <li key={step} class={`step step-${state}`} data-step={step} data-state={state}>
              <span class="step-name">{STEP_NAMES[step]}</span> <span class="step-state">{state}</span>
              {s?.finishedAt && <span class="muted"> {formatTime(s.finishedAt)}</span>}
              {sentence && (
                <p class="step-sentence" data-testid="step-sentence">
                  {sentence}
                </p>
              )}
              {s && Object.keys(s.counts).length > 0 && (
                <details class="operator-details">
                  <summary>Details for operators</summary>
                  <span class="counts">
                    {step}:{' '}
                    {Object.entries(s.counts)
                      .map(([k, v]) => `${k} ${v}`)
                      .join(' · ')}
                  </span>
                </details>
              )}
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
          deciding={request.state === 'needs-dpo' && !decided.current}
          sent={request.state === 'needs-dpo' && decided.current}
          onDecided={() => {
            decided.current = true;
            setTick(tick + 1);
          }}
        />
      )}
      <Certificates session={session} ids={request.certificateIds} />
      {!isErasureFinished(request.state) && (
        <Extension session={session} id={request.id} onExtended={() => setTick(tick + 1)} />
      )}
    </section>
  );
}

/** Which probe reached a copy (`kind:target`), as a DPO reads it. */
const PROBE_WORDS: Record<string, string> = {
  'content-hash:mongodb': 'the same content stored in the database',
  'content-hash:elasticsearch': 'the same content in the search index',
  'text:mongodb': 'an erased sentence in a stored record',
  'text:elasticsearch': 'an erased sentence in the search index',
  'text:api': 'an erased sentence served by agent search',
  'vector:elasticsearch': 'the same meaning in the search index (embedding)',
};

const RESOLUTION_WORDS: Record<string, string> = {
  open: 'waiting for your decision',
  extended: 'erased by this request too',
  stated: 'kept, and named in the certificate',
};

/** Copies of erased content under other ids: the DPO erases them too, or certifies with them named. */
function Findings(props: {
  session: Session;
  id: string;
  findings: NonNullable<ErasureDetail['findings']>;
  deciding: boolean;
  /** The DPO's decision is sent and the workflow has not taken it up yet. */
  sent: boolean;
  onDecided: () => void;
}) {
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<{ reason?: string }>({});
  const [failure, setFailure] = useState<unknown>(null);
  const open = props.findings.filter((f) => f.resolution === 'open').length;
  const copies = count(open, 'copy', 'copies');
  const decide = async (decision: 'extend' | 'certify') => {
    setFailure(null);
    if (!reason.trim()) {
      document.getElementById('findings-reason')?.focus();
      return setErrors({ reason: 'Reason: required — say why you decide so' });
    }
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
        After the purge, the checks found erased content again under other ids: records the request did not name and no
        legal hold keeps.{' '}
        {props.deciding
          ? `The request waits for you: nothing is certified until you decide what becomes of the ${copies}.`
          : props.sent
            ? 'Your decision is sent: the request resumes with it.'
            : 'What became of each is below.'}
      </p>
      <table data-testid="findings">
        <caption>Copies and the check that found each</caption>
        <thead>
          <tr>
            <th scope="col">Record</th>
            <th scope="col">Kind</th>
            <th scope="col">Found by</th>
            <th scope="col">Now</th>
          </tr>
        </thead>
        <tbody>
          {props.findings.map((f) => (
            <tr key={f.id} data-finding={f.id} data-resolution={f.resolution}>
              <td>{f.id}</td>
              <td>{f.kind}</td>
              <td>
                {f.probes.map((p) => PROBE_WORDS[p] ?? p).join('; ')} <span class="muted">({f.probes.join(', ')})</span>
              </td>
              <td>{RESOLUTION_WORDS[f.resolution] ?? f.resolution}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.deciding && (
        <form onSubmit={(e) => e.preventDefault()} noValidate>
          <dl class="decisions">
            <dt>Erase the copies too</dt>
            <dd>
              The request is extended to the {copies}: they are erased like the rest (stopped, deleted, checked again)
              and the certificate covers them. Choose this when the copies repeat what the subject asked to erase.
            </dd>
            <dt>Certify with the copies stated</dt>
            <dd>
              The {copies} stay; the certificate names {open === 1 ? 'it' : 'them'} as found and not erased, so whoever
              reads it knows. Choose this when a copy is rightly kept, e.g. another person&rsquo;s own record that says
              the same.
            </dd>
          </dl>
          <Field id="findings-reason" label="Reason for your decision" error={errors.reason}>
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
