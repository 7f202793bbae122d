/**
 * C2SP checkpoints (https://c2sp.org/tlog-checkpoint): the body a log signs to commit to its tree, three lines, the
 * log's origin, the tree size in decimal and the root hash in base64, then any extension lines. Signed as a C2SP
 * note (`signed-note.ts`), it is what an auditor keeps to check later that the log only grew.
 */
import type { Hash } from './merkle-tree.js';
import { fromCanonicalBase64, toBase64 } from '../../../shared/bytes.js';

export interface Checkpoint {
  origin: string;
  size: number;
  root: Hash;
  extensions?: string[];
}

/** The checkpoint's text, newline-terminated, ready to be signed. */
export function formatCheckpoint(c: Checkpoint): string {
  if (c.origin.length === 0 || /[\n\r]/u.test(c.origin)) throw new Error('checkpoint origin: one non-empty line');
  if (!Number.isSafeInteger(c.size) || c.size < 0) throw new Error(`checkpoint size: ${c.size} is not a tree size`);
  if (c.root.length !== 32) throw new Error('checkpoint root: a SHA-256 hash');
  const extensions = c.extensions ?? [];
  for (const line of extensions)
    if (line.length === 0 || /[\n\r]/u.test(line)) throw new Error('checkpoint extension: one non-empty line');
  return [c.origin, String(c.size), toBase64(c.root), ...extensions].map((l) => `${l}\n`).join('');
}

/** The checkpoint a text holds, or null when it is not one (a size with a leading zero, a root of the wrong length…). */
export function parseCheckpoint(text: string): Checkpoint | null {
  if (!text.endsWith('\n')) return null;
  const lines = text.slice(0, -1).split('\n');
  const [origin, size, root, ...extensions] = lines;
  if (!origin || !size || !root) return null;
  if (!/^(0|[1-9][0-9]*)$/u.test(size) || !Number.isSafeInteger(Number(size))) return null;
  const hash = fromCanonicalBase64(root);
  if (!hash || hash.length !== 32) return null;
  if (extensions.some((l) => l.length === 0)) return null;
  return { origin, size: Number(size), root: hash, ...(extensions.length ? { extensions } : {}) };
}
