/**
 * The C2SP witness wire formats Lethe reads and writes: cosignature lines (c2sp.org/tlog-cosignature), the
 * add-checkpoint request and a 409's body (c2sp.org/tlog-witness), and what is refused before any byte is sent.
 * The cosignatures here are made with node:crypto straight from the spec's text, not with the code under test.
 */
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  cosignatureVerifier,
  parseCosignatureLine,
  parseCosignatureLines,
  withCosignatures,
} from '../../../src/governance/audit/witness/cosignature.js';
import {
  formatAddCheckpoint,
  parseSizeConflict,
  submittableCheckpoint,
} from '../../../src/governance/audit/witness/add-checkpoint.js';
import { formatCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { noteSigner, signNote } from '../../../src/governance/audit/log-tree/signed-note.js';
import { createSigner } from '../../../src/governance/certificates/signing.js';

const rawKey = (key: KeyObject) => key.export({ format: 'der', type: 'spki' }).subarray(12);

/** A witness key as the spec defines it: key id = SHA-256(name ‖ 0x0A ‖ 0x04 ‖ key)[:4]. */
function witnessKey(name: string) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const typed = Buffer.concat([Buffer.of(0x04), rawKey(publicKey)]);
  const keyId = createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`), typed]))
    .digest()
    .subarray(0, 4);
  const vkey = `${name}+${keyId.toString('hex')}+${typed.toString('base64')}`;
  const cosign = (text: string, time: number) => {
    const signature = sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${text}`), privateKey);
    const stamp = Buffer.alloc(8);
    stamp.writeBigUInt64BE(BigInt(time));
    return `— ${name} ${Buffer.concat([keyId, stamp, signature]).toString('base64')}\n`;
  };
  return { vkey, cosign };
}

const logSigner = noteSigner('lethe.test/audit/t1', createSigner(generateKeyPairSync('ed25519').privateKey));
const text = formatCheckpoint({ origin: 'lethe.test/audit/t1', size: 5, root: new Uint8Array(32).fill(7) });
const note = signNote(text, [logSigner]);

describe('a cosignature line', () => {
  const witness = witnessKey('example.org/witness');

  it('is read as its key name, key id and timestamp, and verifies over the checkpoint it cosigned', () => {
    const line = witness.cosign(text, 1_790_000_000);
    const parsed = parseCosignatureLine(line)!;
    expect(parsed).toMatchObject({ keyName: 'example.org/witness', timestamp: 1_790_000_000, line });
    const verifier = cosignatureVerifier(witness.vkey);
    expect(parsed.keyId).toBe(verifier.keyId.toString('hex'));
    expect(verifier.verify(text, parsed)).toBe(true);
  });

  it('does not verify over another checkpoint, under another key, or with its timestamp changed', () => {
    const parsed = parseCosignatureLine(witness.cosign(text, 1_790_000_000))!;
    const other = formatCheckpoint({ origin: 'lethe.test/audit/t1', size: 6, root: new Uint8Array(32).fill(7) });
    expect(cosignatureVerifier(witness.vkey).verify(other, parsed)).toBe(false);
    expect(cosignatureVerifier(witnessKey('example.org/witness').vkey).verify(text, parsed)).toBe(false);
    expect(cosignatureVerifier(witness.vkey).verify(text, { ...parsed, timestamp: parsed.timestamp + 1 })).toBe(false);
  });

  it('is refused when it is not one: no dash, a wrong length, padding gone, a third field, a space in the name', () => {
    const line = witness.cosign(text, 1);
    const [, name = '', b64 = ''] = /^— (\S+) (\S+)\n$/u.exec(line)!;
    for (const bad of [
      `- ${name} ${b64}\n`,
      `— ${name} ${b64.slice(0, -4)}\n`,
      `— ${name} ${b64.replace(/=+$/u, '')}\n`,
      `— ${name} ${b64} extra\n`,
      `— ${name}\n`,
      `— a b ${b64}\n`,
      `— ${name} ${b64}\n— ${name} ${b64}\n`,
    ])
      expect(parseCosignatureLine(bad), JSON.stringify(bad)).toBeNull();
  });

  it('comes back from a witness as one or more lines, each newline-terminated', () => {
    const two = witness.cosign(text, 1) + witness.cosign(text, 2);
    expect(parseCosignatureLines(two)?.map((c) => c.timestamp)).toEqual([1, 2]);
    expect(parseCosignatureLines(two.slice(0, -1))).toBeNull();
    expect(parseCosignatureLines('')).toBeNull();
    expect(parseCosignatureLines(`${witness.cosign(text, 1)}not a line\n`)).toBeNull();
  });

  it('goes under the log’s own signature, making a cosigned checkpoint that is still a signed note', () => {
    const cosigned = withCosignatures(note, [parseCosignatureLine(witness.cosign(text, 3))!]);
    expect(cosigned.startsWith(note)).toBe(true);
    expect(submittableCheckpoint(cosigned).text).toBe(text);
  });

  it('needs a cosignature/v1 verifier key whose id matches its key', () => {
    expect(() => cosignatureVerifier(logSigner.verifierKey)).toThrow(/cosignature\/v1/u);
    // The key is base64, which may itself hold a `+`: only the first two separate fields.
    const [name, id, ...rest] = witness.vkey.split('+');
    const key = rest.join('+');
    expect(() => cosignatureVerifier(`${name}+${id === '00000000' ? '00000001' : '00000000'}+${key}`)).toThrow(
      /key id/u,
    );
  });
});

describe("a witness's 409 body", () => {
  it('is the size it has seen, in decimal, and a newline', () => {
    expect(parseSizeConflict('0\n')).toBe(0);
    expect(parseSizeConflict('17\n')).toBe(17);
    expect(parseSizeConflict('9007199254740991\n')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('is refused in any other shape', () => {
    for (const body of [
      '',
      '17',
      '017\n',
      '-1\n',
      '1e3\n',
      ' 17\n',
      '17\n\n',
      '17\r\n',
      '0x11\n',
      '99999999999999999\n',
    ])
      expect(parseSizeConflict(body), JSON.stringify(body)).toBeNull();
  });
});

describe('an add-checkpoint request', () => {
  it('is the old size, the proof lines, a blank line, then the note', () => {
    const proof = [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)];
    const body = formatAddCheckpoint({ oldSize: 3, proof, note });
    const b64 = (h: Uint8Array) => Buffer.from(h).toString('base64');
    expect(body).toBe(`old 3\n${b64(proof[0]!)}\n${b64(proof[1]!)}\n\n${note}`);
    expect(formatAddCheckpoint({ oldSize: 0, proof: [], note })).toBe(`old 0\n\n${note}`);
  });

  it('refuses, before sending, a note with a NUL or an origin split over two lines', () => {
    const nul = note.replace('lethe.test/audit/t1\n', 'lethe.test/audit/t\u00001\n');
    expect(() => submittableCheckpoint(nul)).toThrow(/control character/u);
    const split = note.replace('lethe.test/audit/t1\n', 'lethe.test/audit\nt1\n');
    expect(() => submittableCheckpoint(split)).toThrow(/not a checkpoint/u);
    expect(submittableCheckpoint(note).checkpoint).toMatchObject({ origin: 'lethe.test/audit/t1', size: 5 });
  });
});
