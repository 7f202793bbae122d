/**
 * How Lethe talks to a witness, against a witness of this file's own that keeps a size per log and cosigns with a
 * real key (the stack's litewitness is exercised in test/integration/audit/witness.test.ts): the 409 dance, the one
 * retry, a witness ahead of the checkpoint, a 403 that enrols the log once, and answers that do not verify.
 */
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { formatCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { noteSigner, signNote } from '../../../src/governance/audit/log-tree/signed-note.js';
import { createSigner } from '../../../src/governance/certificates/signing.js';
import { createCheckpointCosigner } from '../../../src/governance/audit/witness/checkpoint-cosigner.js';
import { cosignatureVerifier, parseCosignatureLine } from '../../../src/governance/audit/witness/cosignature.js';
import {
  witnessRefused,
  type AddCheckpointRequest,
  type Witness,
  type WitnessError,
} from '../../../src/governance/audit/witness/witness.port.js';

const NAME = 'example.org/witness';
const ORIGIN = 'lethe.test/audit/t1';
const logSigner = noteSigner(ORIGIN, createSigner(generateKeyPairSync('ed25519').privateKey));
const noteOf = (size: number) =>
  signNote(formatCheckpoint({ origin: ORIGIN, size, root: new Uint8Array(32).fill(size) }), [logSigner]);

function fakeWitness(opts: { size?: number; known?: boolean; moveTo?: number; garble?: boolean } = {}) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const typed = Buffer.concat([Buffer.of(0x04), publicKey.export({ format: 'der', type: 'spki' }).subarray(12)]);
  const keyId = createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${NAME}\n`), typed]))
    .digest()
    .subarray(0, 4);
  const state = { size: opts.size ?? 0, known: opts.known ?? true, requests: [] as AddCheckpointRequest[] };
  const witness: Witness = {
    name: 'fake',
    verifier: cosignatureVerifier(`${NAME}+${keyId.toString('hex')}+${typed.toString('base64')}`),
    async addCheckpoint(request) {
      state.requests.push(request);
      if (!state.known) throw witnessRefused('fake', 'unknown log', 403);
      if (request.oldSize !== state.size) {
        const seen = state.size;
        if (opts.moveTo !== undefined) state.size = opts.moveTo;
        return { kind: 'size-conflict', witnessSize: seen };
      }
      const text = request.note.slice(0, request.note.lastIndexOf('\n\n') + 1);
      state.size = Number(text.split('\n')[1]);
      const stamp = Buffer.alloc(8);
      stamp.writeBigUInt64BE(1_800_000_000n);
      const signature = sign(
        null,
        Buffer.from(`cosignature/v1\ntime 1800000000\n${opts.garble ? 'x' : ''}${text}`),
        privateKey,
      );
      const line = `— ${NAME} ${Buffer.concat([keyId, stamp, signature]).toString('base64')}\n`;
      return { kind: 'cosigned', cosignatures: [parseCosignatureLine(line)!] };
    },
  };
  return { witness, state };
}

const proofs: [number, number][] = [];
const log = (size: number) => ({
  note: noteOf(size),
  verifierKey: logSigner.verifierKey,
  proofOf: async (from: number, to: number) => {
    proofs.push([from, to]);
    return [new Uint8Array(32)];
  },
});
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as WitnessError,
  );

describe('a checkpoint cosigner', () => {
  it('claims size 0 at first, learns the size from a 409, and proves from there; then remembers it', async () => {
    const { witness, state } = fakeWitness({ size: 4 });
    const cosigner = createCheckpointCosigner({ witness });
    proofs.length = 0;
    const cosignature = await cosigner.cosign(log(9));
    expect(cosignature.keyName).toBe(NAME);
    expect(state.requests.map((r) => r.oldSize)).toEqual([0, 4]);
    expect(proofs).toEqual([[4, 9]]);
    await cosigner.cosign(log(12));
    expect(state.requests.map((r) => r.oldSize)).toEqual([0, 4, 9]);
  });

  it('resubmits once only: a witness whose size moves again is refused with a 409', async () => {
    const { witness, state } = fakeWitness({ size: 4, moveTo: 6 });
    const error = await refusal(createCheckpointCosigner({ witness }).cosign(log(9)));
    expect([error?.type, error?.witnessStatus]).toEqual(['WitnessRefused', 409]);
    expect(state.requests).toHaveLength(2);
  });

  it('sends nothing more to a witness that has seen a larger tree than the checkpoint', async () => {
    const { witness, state } = fakeWitness({ size: 20 });
    const error = await refusal(createCheckpointCosigner({ witness }).cosign(log(9)));
    expect(error?.message).toMatch(/larger tree \(20\)/u);
    expect(state.requests).toHaveLength(1);
  });

  it('enrols a log the witness does not know, once, then submits again', async () => {
    const { witness, state } = fakeWitness({ known: false });
    const enrolled: string[][] = [];
    const enrolment = {
      async enrol(origin: string, key: string) {
        enrolled.push([origin, key]);
        state.known = true;
      },
    };
    await createCheckpointCosigner({ witness, enrolment }).cosign(log(3));
    expect(enrolled).toEqual([[ORIGIN, logSigner.verifierKey]]);
    const stubborn = fakeWitness({ known: false });
    const error = await refusal(
      createCheckpointCosigner({ witness: stubborn.witness, enrolment: { enrol: async () => undefined } }).cosign(
        log(3),
      ),
    );
    expect(error?.witnessStatus).toBe(403);
    expect(stubborn.state.requests).toHaveLength(2);
  });

  it('keeps no cosignature that does not verify over this checkpoint under the pinned key', async () => {
    const { witness } = fakeWitness({ garble: true });
    const error = await refusal(createCheckpointCosigner({ witness }).cosign(log(3)));
    expect(error?.message).toMatch(/none of its cosignatures verifies/u);
  });
});
