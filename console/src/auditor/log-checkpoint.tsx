import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, formatTime } from '../ui/controls.js';
import type { CheckpointView, ConsistencyProofView, WitnessKeysView } from '../../../src/shared/api-contract/audit.js';
import { verifyCheckpoint, verifyExtends, type CheckpointVerdict, type ProofOf } from './log-verify.js';
import { keepLastSeen, readLastSeen, type LastSeenCheckpoint } from './last-seen-checkpoint.js';
import { CertificateInclusion } from './certificate-inclusion.js';

type Consistency =
  | { state: 'first' }
  | { state: 'ok'; seenAt: string; size: number }
  | { state: 'failed'; reason: string; seenAt?: string; size?: number };

interface Checked {
  view: CheckpointView;
  logKey: string;
  /** The kept checkpoint the log key was pinned with; none on a first visit. */
  pinned: LastSeenCheckpoint | null;
  verdict: CheckpointVerdict;
  consistency: Consistency | null;
}

/**
 * The latest checkpoint of the tenant's audit log, checked here: the log's signature under the log key pinned in this
 * browser, each configured witness's cosignature, and that the log extends the checkpoint this browser saw last.
 */
export function LogCheckpoint(props: { session: Session }) {
  const { session } = props;
  const [checked, setChecked] = useState<Checked | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [none, setNone] = useState(false);

  useEffect(() => {
    let live = true;
    check(session)
      .then((c) => live && (c === 'none' ? setNone(true) : setChecked(c)))
      .catch((e: unknown) =>
        setFailure(
          e instanceof ApiError ? e : new ApiError(0, `the check could not run: ${(e as Error).message}`, null),
        ),
      );
    return () => {
      live = false;
    };
  }, [session]);

  return (
    <section aria-labelledby="log-heading">
      <h2 id="log-heading">Audit log checkpoint</h2>
      <ErrorNotice error={failure} />
      {none && <p class="notice">No checkpoint has been published for this log yet.</p>}
      {!checked && !failure && !none && <p class="muted">Checking the latest checkpoint…</p>}
      {checked && <CheckpointFacts checked={checked} />}
      <CertificateInclusion
        session={session}
        current={checked?.verdict.ok ? { note: checked.view.note, logKey: checked.logKey } : null}
      />
    </section>
  );
}

async function check(session: Session): Promise<Checked | 'none'> {
  let view: CheckpointView;
  try {
    view = await getJson<CheckpointView>(session, '/audit/checkpoint');
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return 'none';
    throw e;
  }
  const { witnesses } = await getJson<WitnessKeysView>(session, '/audit/witnesses');
  const kept = readLastSeen(session.tenant);
  const pinned = kept === 'unreadable' ? null : kept;
  const logKey = pinned?.verifierKey ?? view.verifierKey;
  const verdict = await verifyCheckpoint(view, logKey, witnesses);
  let consistency: Consistency | null = null;
  if (kept === 'unreadable') {
    consistency = { state: 'failed', reason: 'the checkpoint kept in this browser is unreadable' };
  } else if (verdict.ok && pinned) {
    const joined = await verifyExtends(pinned.note, view.note, logKey, proofOf(session));
    consistency = joined.ok
      ? { state: 'ok', seenAt: pinned.seenAt, size: joined.from }
      : { state: 'failed', reason: joined.reason, seenAt: pinned.seenAt, size: pinned.size };
  } else if (verdict.ok) {
    consistency = { state: 'first' };
  }
  // Only a checkpoint shown to extend the kept one replaces it: a failure's evidence stays for the next visit.
  if (verdict.ok && (consistency?.state === 'ok' || consistency?.state === 'first'))
    keepLastSeen(session.tenant, {
      verifierKey: logKey,
      note: view.note,
      size: verdict.size,
      seenAt: new Date().toISOString(),
    });
  return { view, logKey, pinned, verdict, consistency };
}

const proofOf =
  (session: Session): ProofOf =>
  async (from, to) =>
    (await getJson<ConsistencyProofView>(session, '/audit/proofs/consistency', { from, to })).proof;

function CheckpointFacts(props: { checked: Checked }) {
  const { view, verdict, logKey, pinned, consistency } = props.checked;
  return (
    <div data-checkpoint={verdict.ok ? 'ok' : 'failed'}>
      <dl class="facts">
        <dt>Origin</dt>
        <dd>{view.origin}</dd>
        <dt>Tree size</dt>
        <dd data-testid="tree-size">{view.size}</dd>
        <dt>Root hash</dt>
        <dd>
          <code>{view.root}</code>
        </dd>
        <dt>Published</dt>
        <dd>{formatTime(view.at)}</dd>
        <dt>Log key</dt>
        <dd>
          <code>{logKey}</code>
          <br />
          <span class="muted">
            {pinned
              ? `pinned in this browser on ${formatTime(pinned.seenAt)}`
              : 'taken from the API on this first visit and pinned: compare it with the key published to you'}
          </span>
        </dd>
      </dl>
      {verdict.ok ? (
        <p class="notice ok" role="status" data-testid="log-signature">
          The log&apos;s Ed25519 signature of this checkpoint verified in this browser.
        </p>
      ) : (
        <p class="notice error" role="alert" data-testid="log-signature">
          FAILED: {verdict.reason}
        </p>
      )}
      {verdict.ok && <Witnesses verdict={verdict} />}
      {consistency && <ConsistencyNotice consistency={consistency} />}
    </div>
  );
}

function Witnesses(props: { verdict: Extract<CheckpointVerdict, { ok: true }> }) {
  const { witnesses } = props.verdict;
  if (witnesses.length === 0) return <p class="muted">This deployment names no witnesses.</p>;
  const label = { verified: 'cosigned, verified', missing: 'no cosignature', invalid: 'cosignature does not verify' };
  return (
    <table>
      <caption>Witness cosignatures (c2sp.org/tlog-cosignature)</caption>
      <thead>
        <tr>
          <th scope="col">Witness</th>
          <th scope="col">Key name</th>
          <th scope="col">Cosignature</th>
        </tr>
      </thead>
      <tbody>
        {witnesses.map((w) => (
          <tr key={w.witness} data-witness={w.witness} data-cosignature={w.state}>
            <td>{w.witness}</td>
            <td>
              <code>{w.keyName}</code>
            </td>
            <td>{label[w.state]}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ConsistencyNotice(props: { consistency: Consistency }) {
  const c = props.consistency;
  if (c.state === 'first')
    return (
      <p class="notice" data-consistency="first">
        First visit from this browser: this checkpoint is kept, and the next visit checks that the log extends it.
      </p>
    );
  if (c.state === 'ok')
    return (
      <p class="notice ok" role="status" data-consistency="ok">
        Consistent with the checkpoint you saw on {formatTime(c.seenAt)} (size {c.size}).
      </p>
    );
  return (
    <p class="notice error" role="alert" data-consistency="failed">
      FAILED against the checkpoint you saw{c.seenAt ? ` on ${formatTime(c.seenAt)}` : ''}
      {c.size !== undefined ? ` (size ${c.size})` : ''}: <span data-testid="consistency-reason">{c.reason}</span>
    </p>
  );
}
