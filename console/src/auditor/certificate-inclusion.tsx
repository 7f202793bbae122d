import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJson, getText } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described } from '../ui/controls.js';
import { checkpointSizeOf } from '../../../src/governance/audit/log-tree/log-anchor.js';
import type { AnchoredVerdict } from '../../../src/governance/certificates/anchored-certificate.js';
import type { ConsistencyProofView } from '../../../src/shared/api-contract/audit.js';
import { verifyCertificateInclusion } from './log-verify.js';

/** How many recent certificate ids the picker offers (the id can always be pasted). */
const PICKER_SIZE = 50;
const RECENT_DAYS = 90;

/**
 * One certificate's place in the audit log, checked here: the page fetches it anchored (…/certificates/:id/anchored)
 * and verifies its seal, its audit entry, the checkpoint it carries under the pinned log key and the inclusion proof
 * to that checkpoint's root, then that the checkpoint verified above extends the anchor's.
 */
export function CertificateInclusion(props: { session: Session; current: { note: string; logKey: string } | null }) {
  const { session, current } = props;
  const [id, setId] = useState('');
  const [idError, setIdError] = useState<string | undefined>();
  const [recent, setRecent] = useState<string[]>([]);
  const [verdict, setVerdict] = useState<AnchoredVerdict | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const from = new Date(Date.now() - RECENT_DAYS * 86_400_000).toISOString().slice(0, 10);
    getText(session, '/certificates', { from })
      .then((jsonl) => setRecent(idsOf(jsonl).slice(-PICKER_SIZE).reverse()))
      .catch(() => setRecent([])); // the picker is a convenience: a pasted id still works
  }, [session]);

  const run = async (event: Event) => {
    event.preventDefault();
    setVerdict(null);
    setFailure(null);
    const wanted = id.trim();
    if (!/^[A-Za-z0-9_-]{1,128}$/u.test(wanted)) {
      setIdError('Certificate id: paste or pick an id such as crt_…');
      return;
    }
    setIdError(undefined);
    if (!current) {
      setFailure(new ApiError(0, 'no verified checkpoint of the log: there is no log key to check against', null));
      return;
    }
    setBusy(true);
    try {
      const anchored = await getJson<unknown>(session, `/certificates/${encodeURIComponent(wanted)}/anchored`);
      const publicKeyPem = await getText(session, '/certificates/public-key');
      const later = await laterCheckpoint(session, anchored, current.note);
      setVerdict(await verifyCertificateInclusion(anchored, { publicKeyPem, logKey: current.logKey }, later));
    } catch (e) {
      setFailure(e instanceof ApiError ? e : new ApiError(0, `the check could not run: ${(e as Error).message}`, null));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h3 id="inclusion-heading">Inclusion of a certificate</h3>
      <form onSubmit={(e) => void run(e)} noValidate aria-labelledby="inclusion-heading">
        <Field id="certificate-id" label="Certificate id" error={idError}>
          <input
            {...described('certificate-id', idError)}
            list="recent-certificates"
            autocomplete="off"
            value={id}
            onInput={(e) => setId(e.currentTarget.value)}
          />
        </Field>
        <datalist id="recent-certificates">
          {recent.map((r) => (
            <option key={r} value={r} />
          ))}
        </datalist>
        <button type="submit" disabled={busy}>
          Check inclusion in this browser
        </button>
      </form>
      <ErrorNotice error={failure} />
      {verdict && <InclusionVerdict verdict={verdict} />}
    </>
  );
}

/** The checkpoint verified above, and the consistency proof between it and the anchor's (empty at equal sizes). */
async function laterCheckpoint(session: Session, anchored: unknown, note: string) {
  const anchorNote = (anchored as { logAnchor?: { checkpoint?: unknown } }).logAnchor?.checkpoint;
  const from = typeof anchorNote === 'string' ? checkpointSizeOf(anchorNote) : null;
  const to = checkpointSizeOf(note);
  // A malformed anchor is named by the verifier itself; the later check needs its size.
  if (from === null || to === null) return undefined;
  if (from === to) return { note, consistencyProof: [] };
  const [small, large] = from < to ? [from, to] : [to, from];
  const view = await getJson<ConsistencyProofView>(session, '/audit/proofs/consistency', { from: small, to: large });
  return { note, consistencyProof: view.proof };
}

function idsOf(jsonl: string): string[] {
  const ids: string[] = [];
  for (const line of jsonl.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const id = (JSON.parse(line) as { certificateId?: unknown }).certificateId;
      if (typeof id === 'string') ids.push(id);
    } catch {
      // a line the verifier above would name; not the picker's concern
    }
  }
  return ids;
}

function InclusionVerdict(props: { verdict: AnchoredVerdict }) {
  const v = props.verdict;
  if (v.ok)
    return (
      <p class="notice ok verdict" role="status" data-inclusion="ok">
        Included: certificate {v.certificateId} is recorded at audit seq {v.auditSeq}, in the checkpoint of{' '}
        {v.checkpointSize} entries of {v.origin}
        {v.consistentWith !== undefined ? `, which the latest checkpoint (${v.consistentWith}) extends` : ''}; its
        signature (key {v.keyId}), entry, checkpoint signature and inclusion proof verified in this browser.
      </p>
    );
  return (
    <div class="notice error verdict" role="alert" data-inclusion="failed" data-part={v.part}>
      <p>
        <strong>FAILED at the {PART_NAMES[v.part]}</strong>
      </p>
      <p data-testid="inclusion-reason">{v.reason}</p>
    </div>
  );
}

const PART_NAMES: Record<Extract<AnchoredVerdict, { ok: false }>['part'], string> = {
  certificate: 'certificate (its seal)',
  anchor: 'anchor (its shape)',
  entry: 'audit entry',
  binding: "audit entry's record of the certificate",
  checkpoint: "checkpoint's signature",
  proof: 'inclusion proof',
  consistency: 'consistency with the latest checkpoint',
};
