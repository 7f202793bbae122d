/**
 * Signed checkpoints as an auditor opens them: a note opens only under every key the reader requires, a change of one
 * byte of its text closes it, other signers' lines are skipped, and odd input is refused as null, never thrown.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createSigner } from '../../../src/governance/certificates/signing.js';
import { describe, expect, it } from 'vitest';
import { formatCheckpoint, parseCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import {
  noteSigner,
  noteVerifier,
  openNote,
  parseNote,
  signNote,
} from '../../../src/governance/audit/log-tree/signed-note.js';

const keyPair = () => createSigner(generateKeyPairSync('ed25519').privateKey);
const root = new Uint8Array(32).fill(7);
const text = formatCheckpoint({ origin: 'lethe.example/audit/acme', size: 12, root });

describe('signed notes', () => {
  const log = noteSigner('lethe.example/audit/acme', keyPair());
  const witness = noteSigner('witness.example', keyPair());

  it("opens under the signer's verifier key, and gives back the text signed", () => {
    expect(openNote(signNote(text, [log]), [noteVerifier(log.verifierKey)])).toBe(text);
  });

  it("closes when one byte of the text changes, or when the signature is another key's under this name", () => {
    const note = signNote(text, [log]);
    expect(openNote(note.replace('\n12\n', '\n13\n'), [noteVerifier(log.verifierKey)])).toBeNull();
    const impostor = noteSigner('lethe.example/audit/acme', keyPair());
    expect(openNote(signNote(text, [impostor]), [noteVerifier(log.verifierKey)])).toBeNull();
  });

  it('requires every key the reader names, and skips signatures by keys it does not', () => {
    const both = signNote(text, [log, witness]);
    expect(openNote(both, [noteVerifier(log.verifierKey), noteVerifier(witness.verifierKey)])).toBe(text);
    expect(openNote(both, [noteVerifier(witness.verifierKey)])).toBe(text);
    expect(
      openNote(signNote(text, [log]), [noteVerifier(log.verifierKey), noteVerifier(witness.verifierKey)]),
    ).toBeNull();
    expect(openNote(both, [])).toBeNull();
  });

  it('reads a verifier key whose base64 holds a +', () => {
    let signer = noteSigner('k', keyPair());
    while (!signer.verifierKey.slice(signer.verifierKey.indexOf('+', 2) + 1).includes('+'))
      signer = noteSigner('k', keyPair());
    expect(openNote(signNote(text, [signer]), [noteVerifier(signer.verifierKey)])).toBe(text);
  });

  it('refuses a verifier key that does not add up, naming what is wrong', () => {
    const [name, id, key] = [log.name, log.verifierKey.split('+')[1]!, log.verifierKey.split('+').slice(2).join('+')];
    expect(() => noteVerifier(`${name}+00000000+${key}`)).toThrow(/key id/);
    expect(() => noteVerifier(`other+${id}+${key}`)).toThrow(/key id/);
    expect(() => noteVerifier(`${name}+${id}`)).toThrow(/expected/);
    expect(() => noteVerifier(`${name}+${id}+AAAA`)).toThrow(/Ed25519/);
    expect(() => noteSigner('two words', keyPair())).toThrow(/key name/);
  });

  it('refuses odd input as null: no signature, no blank line, a line not shaped as a signature', () => {
    for (const odd of [
      '',
      '\n',
      text,
      `${text}\n`,
      `${text}\nnot a signature\n`,
      `${text}\n— name\n`,
      'a\u0000b\n\n— x AAAAAAA=\n',
    ])
      expect(parseNote(odd), JSON.stringify(odd)).toBeNull();
    expect(openNote(`${text}\n— ${log.name} ${'A'.repeat(10)}\n`, [noteVerifier(log.verifierKey)])).toBeNull();
  });
});

describe('checkpoints', () => {
  it('format as origin, size and root, and parse back', () => {
    expect(text).toBe(`lethe.example/audit/acme\n12\n${Buffer.from(root).toString('base64')}\n`);
    expect(parseCheckpoint(text)).toEqual({ origin: 'lethe.example/audit/acme', size: 12, root });
    const extended = formatCheckpoint({ origin: 'o', size: 0, root, extensions: ['ext one'] });
    expect(parseCheckpoint(extended)).toEqual({ origin: 'o', size: 0, root, extensions: ['ext one'] });
  });

  it('refuse what is not one: a leading zero, a short root, a missing line, a line break in the origin', () => {
    const b64 = Buffer.from(root).toString('base64');
    for (const odd of [`o\n012\n${b64}\n`, `o\n12\n${b64.slice(4)}\n`, `o\n12\n`, `o\n12\n${b64}`, `o\n-1\n${b64}\n`])
      expect(parseCheckpoint(odd), JSON.stringify(odd)).toBeNull();
    expect(() => formatCheckpoint({ origin: 'a\nb', size: 1, root })).toThrow(/origin/);
    expect(() => formatCheckpoint({ origin: 'o', size: 1.5, root })).toThrow(/size/);
  });
});
