/**
 * The audit log's Merkle tree and signed notes held against an implementation written apart from Lethe's: Go's
 * `golang.org/x/mod/sumdb/tlog` and `sumdb/note`, through a small Go program this test builds
 * (`test/support/tlog-check`). Roots, inclusion proofs and consistency proofs must be byte for byte tlog's own, and
 * each must pass tlog's checks: for every tree size from 1 to 300, and for random pairs in a log of 100 000 entries.
 * A note Lethe signs must open under Go's verifier, and a note Go signs under Lethe's.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createSigner } from '../../../src/governance/certificates/signing.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  appendHashes,
  consistencyProof,
  inclusionProof,
  leafHash,
  treeHash,
  type Hash,
  type HashGetter,
} from '../../../src/governance/audit/log-tree/merkle-tree.js';
import { formatCheckpoint, parseCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { noteSigner, noteVerifier, openNote, signNote } from '../../../src/governance/audit/log-tree/signed-note.js';

const programDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../support/tlog-check');
let program: string;

interface Claim {
  a: number;
  b: number;
  proof: string[];
}
interface Answer {
  roots: number;
  rootsDiffer: number[];
  inclusion: number;
  inclusionBad: string[];
  consistency: number;
  consistencyBad: string[];
  noteText: string;
  noteError: string;
  signedNote: string;
  signerKey: string;
}

function ask(request: object): Answer {
  const out = execFileSync(program, [], {
    input: JSON.stringify(request),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  return JSON.parse(out) as Answer;
}

/** The log of `n` entries `entry <i>`, as the store keeps it. */
function grow(n: number): HashGetter {
  const stored = new Map<number, Hash>();
  const key = (level: number, index: number) => level * 2 ** 40 + index;
  const get: HashGetter = (level, index) => stored.get(key(level, index))!;
  for (let i = 0; i < n; i++) {
    for (const s of appendHashes(i, leafHash(Buffer.from(`entry ${i}`)), get))
      stored.set(key(s.level, s.index), s.hash);
  }
  return get;
}

const b64 = (h: Hash) => Buffer.from(h).toString('base64');

/** A seeded generator, so that a failing pair can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

beforeAll(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlog-check-'));
  program = path.join(dir, 'tlog-check');
  execFileSync('go', ['build', '-o', program, '.'], { cwd: programDir, stdio: 'pipe' });
}, 300_000);

describe("the audit log's Merkle tree, against Go's sumdb/tlog", () => {
  it('agrees on every root, inclusion proof and consistency proof of every tree size from 1 to 300', () => {
    const N = 300;
    const get = grow(N);
    const inclusion: Claim[] = [];
    const consistency: Claim[] = [];
    for (let size = 1; size <= N; size++) {
      for (let index = 0; index < size; index++)
        inclusion.push({ a: index, b: size, proof: inclusionProof(index, size, get).map(b64) });
      for (let from = 1; from <= size; from++)
        consistency.push({ a: from, b: size, proof: consistencyProof(from, size, get).map(b64) });
    }
    const roots = Array.from({ length: N }, (_, i) => ({ size: i + 1, root: b64(treeHash(i + 1, get)) }));
    const answer = ask({ entries: N, roots, inclusion, consistency });
    expect(answer).toMatchObject({ roots: N, inclusion: (N * (N + 1)) / 2, consistency: (N * (N + 1)) / 2 });
    expect(answer.rootsDiffer).toEqual([]);
    expect(answer.inclusionBad).toEqual([]);
    expect(answer.consistencyBad).toEqual([]);
  });

  it('agrees on random pairs in a log of 100 000 entries', () => {
    const N = 100_000;
    const get = grow(N);
    const next = random(20261206);
    const pick = (below: number) => 1 + Math.floor(next() * below);
    const inclusion: Claim[] = [];
    const consistency: Claim[] = [];
    const roots = new Map<number, string>();
    for (let i = 0; i < 2000; i++) {
      const size = pick(N);
      const index = pick(size) - 1;
      inclusion.push({ a: index, b: size, proof: inclusionProof(index, size, get).map(b64) });
      const [from, to] = [pick(N), pick(N)].sort((x, y) => x - y) as [number, number];
      consistency.push({ a: from, b: to, proof: consistencyProof(from, to, get).map(b64) });
      for (const s of [size, from, to]) roots.set(s, b64(treeHash(s, get)));
    }
    const answer = ask({
      entries: N,
      roots: [...roots].map(([size, root]) => ({ size, root })),
      inclusion,
      consistency,
    });
    expect(answer).toMatchObject({ roots: roots.size, inclusion: 2000, consistency: 2000 });
    expect(answer.rootsDiffer).toEqual([]);
    expect(answer.inclusionBad).toEqual([]);
    expect(answer.consistencyBad).toEqual([]);
  }, 120_000);

  it('catches a proof Lethe got wrong: tlog rejects a proof with one hash changed', () => {
    const get = grow(37);
    const proof = inclusionProof(11, 37, get).map(b64);
    const bent = [...proof];
    bent[1] = b64(leafHash(Buffer.from('not a node of this tree')));
    const answer = ask({ entries: 37, inclusion: [{ a: 11, b: 37, proof: bent }] });
    expect(answer.inclusionBad).toHaveLength(1);
    expect(answer.inclusionBad[0]).toContain('rejected');
  });
});

describe("signed checkpoints, against Go's sumdb/note", () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const signer = noteSigner('lethe.example/audit/acme', createSigner(privateKey));
  const get = grow(42);
  const text = formatCheckpoint({ origin: 'lethe.example/audit/acme', size: 42, root: treeHash(42, get) });

  it("opens under Go's verifier, with the text Lethe signed", () => {
    const answer = ask({ entries: 0, note: signNote(text, [signer]), verifierKey: signer.verifierKey });
    expect(answer.noteError).toBe('');
    expect(answer.noteText).toBe(text);
  });

  it("is refused by Go's verifier once its tree size is changed", () => {
    const forged = signNote(text, [signer]).replace('\n42\n', '\n43\n');
    const answer = ask({ entries: 0, note: forged, verifierKey: signer.verifierKey });
    expect(answer.noteError).not.toBe('');
  });

  it("opens a note Go signed under Lethe's verifier, and parses its checkpoint", () => {
    const answer = ask({ entries: 0, sign: text });
    const verifier = noteVerifier(answer.signerKey);
    expect(openNote(answer.signedNote, [verifier])).toBe(text);
    expect(parseCheckpoint(openNote(answer.signedNote, [verifier])!)).toMatchObject({
      origin: 'lethe.example/audit/acme',
      size: 42,
    });
    // Lethe's own key did not sign it: a reader who requires that key refuses it.
    expect(openNote(answer.signedNote, [verifier, noteVerifier(signer.verifierKey)])).toBeNull();
  });
});
