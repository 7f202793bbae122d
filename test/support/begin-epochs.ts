/**
 * A process that begins `count` KEK epochs in a local keyring file, one after another, and after each wraps a fresh
 * data key: one JSON line per epoch (`{ begun, epoch, wrapped, key, context }`), for a test that runs several of
 * these at once against one file. Usage: `node --import tsx test/support/begin-epochs.ts <file> <count>`.
 */
import { randomBytes } from 'node:crypto';
import { createLocalKekFile } from '../../src/substrate/crypto/local-kek-file.js';

const [file, count] = process.argv.slice(2);
if (!file || !count) throw new Error('usage: begin-epochs.ts <file> <count>');
const keks = createLocalKekFile(file);
for (let i = 0; i < Number(count); i++) {
  const begun = await keks.beginEpoch();
  const key = randomBytes(32);
  const context = `data-key|${process.pid}|${i}`;
  const { epoch, wrapped } = await keks.wrap(key, context);
  process.stdout.write(`${JSON.stringify({ begun, epoch, wrapped, key: key.toString('base64url'), context })}\n`);
}
