/**
 * `lethe verify --log-key` in process, with no server: an anchored certificate passes (exit 0), a changed one fails
 * (exit 7) naming the part, a later checkpoint needs its consistency proof, and bad arguments are usage errors (2).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { registerVerifyCommand } from '../../../app/cli/commands/verify.command.js';
import { ExitCode } from '../../../app/cli/exit-codes.js';
import { anchoredCertificate } from '../../../src/governance/certificates/anchored-certificate.js';
import { formatCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { auditLeaf, logAnchor } from '../../../src/governance/audit/log-tree/log-anchor.js';
import { consistencyProof, inclusionProof } from '../../../src/governance/audit/log-tree/merkle-tree.js';
import { noteSigner, signNote } from '../../../src/governance/audit/log-tree/signed-note.js';
import { naiveRoot } from '../../support/audit-entries.js';
import { runLetheInProcess } from '../../support/cli-in-process.js';
import { anchoringAuditChain, buildCertificateChain, testSigner } from './certificate-fixtures.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-verify-anchored-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  process.exitCode = undefined;
  vi.restoreAllMocks();
});

const signer = testSigner();
const certificates = buildCertificateChain('t-cli', 2, signer);
const chain = anchoringAuditChain(certificates);
const log = noteSigner('lethe.test/audit/t-cli', signer);
const leaves = chain.map(auditLeaf);
const get = (level: number, index: number) => naiveRoot(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level));
const checkpoint = (size: number) =>
  signNote(formatCheckpoint({ origin: log.name, size, root: naiveRoot(leaves.slice(0, size)) }), [log]);
const entry = chain[1]!;
const value = anchoredCertificate(certificates[0]!, logAnchor(entry, checkpoint(3), inclusionProof(1, 3, get)));

const file = (name: string, content: unknown) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
};
const key = file('key.pem', signer.publicKeyPem);
const anchored = file('anchored.json', value);

const lethe = (...args: string[]) => runLetheInProcess((program) => registerVerifyCommand(program), args);

const verify = (...more: string[]) =>
  lethe('verify', anchored, '--public-key', key, '--log-key', log.verifierKey, ...more);

describe('lethe verify --log-key (offline)', () => {
  it('passes an anchored certificate, and refuses a changed one with exit 7 naming the part', async () => {
    const run = await verify();
    expect(run.exitCode, run.out).toBe(0);
    expect(run.out).toMatch(
      /^ok: certificate crt_\w+ of tenant t-cli, .* audit seq 2, included in the checkpoint of 3/,
    );
    const changed = file('changed.json', { ...value, logAnchor: { ...value.logAnchor, index: 0 } });
    const refused = await lethe('verify', changed, '--public-key', key, '--log-key', log.verifierKey, '--json');
    expect(refused.exitCode).toBe(ExitCode.verificationFailed);
    expect(JSON.parse(refused.out)).toMatchObject({ ok: false, part: 'entry' });
  });

  it('checks a later checkpoint with its consistency proof, given as the API answers it', async () => {
    const later = file('later.note', checkpoint(chain.length));
    const missing = await verify('--checkpoint', later);
    expect(missing.exitCode).toBe(ExitCode.usage);
    expect(missing.error?.message).toContain('--consistency-proof');
    const b64 = consistencyProof(3, chain.length, get).map((h) => Buffer.from(h).toString('base64'));
    const proof = file('proof.json', { from: 3, to: chain.length, proof: b64 });
    const run = await verify('--checkpoint', later, '--consistency-proof', proof);
    expect(run.exitCode, run.out).toBe(0);
    expect(run.out).toContain(`consistent with the given checkpoint of ${chain.length}`);
    const wrong = file('wrong.json', { proof: b64.slice(1) });
    const refused = await verify('--checkpoint', later, '--consistency-proof', wrong);
    expect(refused.exitCode).toBe(ExitCode.verificationFailed);
    expect(refused.out).toContain('FAILED (consistency)');
  });

  it('names bad arguments with exit 2', async () => {
    for (const args of [
      ['verify', anchored, '--public-key', key, '--checkpoint', anchored],
      ['verify', anchored, '--public-key', key, '--log-key', 'not-a-key'],
      ['verify', file('plain.json', certificates[0]), '--public-key', key, '--log-key', log.verifierKey],
      ['verify', path.join(dir, 'none.json'), '--public-key', key, '--log-key', log.verifierKey],
    ]) {
      const run = await lethe(...args);
      expect(run.exitCode, args.join(' ')).toBe(ExitCode.usage);
    }
  });
});
