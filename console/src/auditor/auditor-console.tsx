import { useState } from 'preact/hooks';
import { ApiError, getText } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, described, download } from '../ui/controls.js';
import type { CertificateVerification } from '../../../src/governance/certificates/certificate-verify.js';
import { verifyExports } from './verify-exports.js';
import { ErasureFigures } from './erasure-figures.js';
import { LogCheckpoint } from './log-checkpoint.js';

type Outcome = CertificateVerification | { empty: true };

/** Export the certificates and the audit chain, or load exported files, and verify them here, offline from the API. */
export function AuditorConsole(props: { session: Session }) {
  const { session } = props;
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [periodError, setPeriodError] = useState<{ from?: string; to?: string }>({});
  const [failure, setFailure] = useState<unknown>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [exports, setExports] = useState<{ certificates: string; audit: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const period = () => {
    const errors: { from?: string; to?: string } = {};
    const f = from ? new Date(`${from}T00:00:00.000Z`) : undefined;
    const t = to ? new Date(`${to}T23:59:59.999Z`) : undefined;
    if (f && t && f > t) errors.to = 'To: must not be before From';
    setPeriodError(errors);
    return Object.keys(errors).length ? null : { from: f, to: t };
  };

  const run = async (source: 'api' | 'files', files?: { certificates: string; audit: string }) => {
    setFailure(null);
    setOutcome(null);
    const p = period();
    if (!p) return;
    setBusy(true);
    try {
      const publicKeyPem = await getText(session, '/certificates/public-key');
      const data =
        source === 'files' && files
          ? files
          : {
              certificates: await getText(session, '/certificates', { from: from || undefined, to: to || undefined }),
              // The anchors are checked against the whole chain, from seq 1.
              audit: await getText(session, '/audit'),
            };
      setExports(data);
      setOutcome(
        await verifyExports({
          ...data,
          publicKeyPem,
          ...(p.from ? { from: p.from } : {}),
          ...(p.to ? { to: p.to } : {}),
        }),
      );
    } catch (e) {
      // The verifier's own errors (e.g. an unreadable public key) quote nothing of the input: show them as they are.
      setFailure(
        e instanceof ApiError ? e : new ApiError(0, `verification could not run: ${(e as Error).message}`, null),
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <section aria-labelledby="export-heading">
        <h2 id="export-heading">Export and verify</h2>
        <form onSubmit={(e) => (e.preventDefault(), void run('api'))} noValidate>
          <div class="row">
            <Field id="period-from" label="Issued from (date, optional)" error={periodError.from}>
              <input
                type="date"
                {...described('period-from', periodError.from)}
                value={from}
                onInput={(e) => setFrom(e.currentTarget.value)}
              />
            </Field>
            <Field id="period-to" label="Issued to (date, optional)" error={periodError.to}>
              <input
                type="date"
                {...described('period-to', periodError.to)}
                value={to}
                onInput={(e) => setTo(e.currentTarget.value)}
              />
            </Field>
          </div>
          <button type="submit" disabled={busy}>
            Export and verify in this browser
          </button>
        </form>
        {exports && (
          <div class="row">
            <button
              type="button"
              class="secondary"
              onClick={() => download('certificates.jsonl', exports.certificates, 'application/x-ndjson')}
            >
              Save certificates.jsonl
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => download('audit.jsonl', exports.audit, 'application/x-ndjson')}
            >
              Save audit.jsonl
            </button>
          </div>
        )}
      </section>
      <FilesForm busy={busy} onVerify={(files) => void run('files', files)} />
      <ErrorNotice error={failure} />
      {outcome && <Verdict outcome={outcome} />}
      <LogCheckpoint session={session} />
      <ErasureFigures session={session} />
    </>
  );
}

function FilesForm(props: { busy: boolean; onVerify: (files: { certificates: string; audit: string }) => void }) {
  const [error, setError] = useState<{ certificates?: string; audit?: string }>({});
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const c = (form.elements.namedItem('certificates-file') as HTMLInputElement).files?.[0];
    const a = (form.elements.namedItem('audit-file') as HTMLInputElement).files?.[0];
    const errors = {
      ...(c ? {} : { certificates: 'Certificates file: choose an export (lethe certificates export)' }),
      ...(a ? {} : { audit: 'Audit file: choose an export of the same tenant (lethe audit export)' }),
    };
    setError(errors);
    if (c && a) props.onVerify({ certificates: await c.text(), audit: await a.text() });
  };
  return (
    <section aria-labelledby="files-heading">
      <h2 id="files-heading">Verify exported files</h2>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <div class="row">
          <Field id="certificates-file" label="Certificates (JSONL)" error={error.certificates}>
            <input
              type="file"
              name="certificates-file"
              accept=".jsonl,.ndjson,.json,application/x-ndjson"
              {...described('certificates-file', error.certificates)}
            />
          </Field>
          <Field id="audit-file" label="Audit chain (JSONL)" error={error.audit}>
            <input
              type="file"
              name="audit-file"
              accept=".jsonl,.ndjson,.json,application/x-ndjson"
              {...described('audit-file', error.audit)}
            />
          </Field>
        </div>
        <button type="submit" disabled={props.busy}>
          Verify files
        </button>
      </form>
    </section>
  );
}

function Verdict(props: { outcome: Outcome }) {
  const o = props.outcome;
  if ('empty' in o)
    return (
      <p class="notice error verdict" role="alert" data-verdict="failed">
        FAILED: the export holds no certificates — an empty export proves nothing.
      </p>
    );
  if (o.ok)
    return (
      <p class="notice ok verdict" role="status" data-verdict="ok">
        Verified: {o.count} certificate{o.count === 1 ? '' : 's'} (seq {o.firstSeq}–{o.lastSeq}) of tenant {o.tenant};
        Ed25519 signatures valid (key {o.keyIds.join(', ')}); chain intact; all {o.anchored} anchored in an intact audit
        chain of {o.auditEntries} entries.
      </p>
    );
  const bad = o.firstBad;
  const file = bad.source === 'audit' ? 'audit export' : 'certificate export';
  return (
    <div class="notice error verdict" role="alert" data-verdict="failed">
      <p>
        <strong>
          FAILED in the {file} at line {bad.line}
        </strong>
        {bad.certificateId
          ? ` (certificate ${bad.certificateId}${bad.seq !== null ? `, seq ${bad.seq}` : ''})`
          : bad.seq !== null
            ? ` (seq ${bad.seq})`
            : ''}
      </p>
      <p data-testid="verdict-reason">{bad.reason}</p>
    </div>
  );
}
