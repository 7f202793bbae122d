import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { registerVerifyCommand } from '../../../app/cli/commands/verify.command.js';
import { registerCertificateCommands } from '../../../app/cli/commands/certificates.command.js';
import { CliError, ExitCode } from '../../../app/cli/exit-codes.js';
import type { CliContext } from '../../../app/cli/context.js';
import { runLetheInProcess } from '../../support/cli-in-process.js';
import { anchoringAuditChain, buildCertificateChain, jsonl, testSigner } from './certificate-fixtures.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-verify-cli-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  process.exitCode = undefined;
  vi.restoreAllMocks();
});

const signer = testSigner();
const chain = buildCertificateChain('t-cli', 4, signer);
const file = (name: string, lines: string[] | string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, typeof lines === 'string' ? lines : `${lines.join('\n')}\n`);
  return p;
};
const certs = file('certs.jsonl', jsonl(chain));
const audit = file('audit.jsonl', jsonl(anchoringAuditChain(chain)));
const key = file('key.pem', signer.publicKeyPem);

/** Runs `lethe <args>` in-process, with the verify and certificates commands and no API. */
const lethe = (...args: string[]) =>
  runLetheInProcess((program) => {
    registerVerifyCommand(program);
    registerCertificateCommands(program, (): CliContext => {
      throw new CliError('no API in this test', ExitCode.unavailable);
    });
  }, args);

describe('lethe verify (offline)', () => {
  it('an honest export and its audit export: exit 0 with a summary', async () => {
    const run = await lethe('verify', certs, '--public-key', key, '--audit', audit);
    expect(run.exitCode).toBe(0);
    expect(run.out).toMatch(/^ok: 4 certificates \(seq 1–4\) of tenant t-cli; signatures valid/);
    expect(run.out).toContain('all 4 anchored in an intact audit chain of 9 entries');
  });

  it('a tampered certificate: exit 7 naming the line, the certificate and the reason', async () => {
    const lines = jsonl(chain);
    lines[2] = lines[2]!.replace('"deleted":', '"deleted":1');
    const run = await lethe('verify', file('tampered.jsonl', lines), '--public-key', key);
    expect(run.exitCode).toBe(ExitCode.verificationFailed);
    expect(run.out).toBe(
      `FAILED at line 3 (certificate ${chain[2]!.certificateId}, seq 3): hash mismatch: the certificate was changed after it was sealed\n`,
    );
  });

  it('the wrong public key: exit 7 at the first certificate', async () => {
    const run = await lethe('verify', certs, '--public-key', file('other.pem', testSigner().publicKeyPem));
    expect(run.exitCode).toBe(7);
    expect(run.out).toMatch(/^FAILED at line 1 .*unknown key: signed with key/);
  });

  it('an empty export fails with exit 7 unless --allow-empty says it may be empty', async () => {
    const empty = file('empty.jsonl', '');
    const refused = await lethe('verify', empty, '--public-key', key);
    expect(refused.exitCode).toBe(ExitCode.verificationFailed);
    expect(refused.out).toMatch(/^FAILED: the export holds no certificates/);
    process.exitCode = undefined;
    const json = await lethe('--json', 'verify', empty, '--public-key', key);
    expect(json.exitCode).toBe(7);
    expect(JSON.parse(json.out)).toMatchObject({ ok: false, count: 0, reason: 'no certificates' });
    process.exitCode = undefined;
    const allowed = await lethe('verify', empty, '--public-key', key, '--allow-empty');
    expect(allowed.exitCode).toBe(0);
    expect(allowed.out).toMatch(/^ok: 0 certificates \(none\)/);
  });

  it('--json prints the verdict as JSON', async () => {
    const run = await lethe('--json', 'verify', file('short.jsonl', jsonl(chain).slice(1)), '--public-key', key);
    expect(run.exitCode).toBe(7);
    expect(JSON.parse(run.out)).toMatchObject({
      ok: false,
      firstBad: { line: 1, seq: 2, reason: expect.stringMatching(/^seq gap/) },
    });
  });

  it('missing or unusable arguments are usage errors (exit 2), not verification failures', async () => {
    expect((await lethe('verify', certs)).exitCode).toBe(ExitCode.usage);
    expect((await lethe('verify', path.join(dir, 'absent.jsonl'), '--public-key', key)).exitCode).toBe(ExitCode.usage);
    const notAKey = await lethe('verify', certs, '--public-key', certs);
    expect(notAKey.exitCode).toBe(ExitCode.usage);
    expect(notAKey.error?.message).toMatch(/--public-key: .* not a PEM public key/);
    expect((await lethe('verify', certs, '--public-key', key, '--from', 'yesterday')).error?.message).toMatch(
      /^--from: must be an ISO 8601/,
    );
  });
});

describe('lethe certificates (argument handling and the offline public key)', () => {
  it('public-key prints the PEM derived from LETHE_SIGNING_KEY_FILE, with no server', async () => {
    const saved = { ...process.env };
    try {
      process.env.LETHE_STATE_DIR = path.join(dir, 'state');
      process.env.LETHE_SIGNING_KEY_FILE = file('private.pem', signer.privateKeyPem);
      const run = await lethe('certificates', 'public-key');
      expect(run.exitCode).toBe(0);
      expect(run.out).toBe(signer.publicKeyPem);
    } finally {
      process.env = saved;
    }
  });

  it('export refuses a malformed or inverted period before calling the API', async () => {
    expect((await lethe('certificates', 'export', '--from', '2025-13-01')).error?.message).toMatch(
      /^--from: is not a real date/,
    );
    expect((await lethe('certificates', 'export', '--from', '2025-02-01', '--to', '2025-01-01')).error?.message).toBe(
      '--to: must not be before --from',
    );
  });
});
