/**
 * `LETHE_WITNESSES`: the C2SP tlog-witnesses the worker submits each new checkpoint to, as a JSON array.
 *
 *   [{ "name": "stack", "url": "http://127.0.0.1:7380", "key": "<name>+<key id>+<base64(0x04 ‖ key)>" }]
 *
 * `name` is ours (ids in logs and the key under which a checkpoint keeps the witness's cosignature); `key` is the
 * witness's cosignature verifier key, from its operator. `timeoutMs` bounds one request (default 5 000). `enrol`,
 * for a witness whose database this host can write (the local stack's), names the `witnessctl` binary and the
 * database with which a log the witness does not know yet is added on its first refusal.
 */
import { z } from 'zod';
import { ConfigError } from './config-error.js';

/** One witness the worker asks to cosign checkpoints. */
export interface WitnessConfig {
  name: string;
  url: string;
  /** The witness's cosignature/v1 verifier key. */
  key: string;
  timeoutMs: number;
  /** Only for a witness this host administers: how to add a log to it. */
  enrol?: { witnessctl: string; db: string };
}

const VARIABLE = 'LETHE_WITNESSES';

const entry = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/u, 'lower-case letters, digits and "-", at most 63'),
  url: z
    .string()
    .url()
    .refine((u) => /^https?:$/u.test(new URL(u).protocol), 'an http or https URL'),
  key: z
    .string()
    .regex(/^[^\s+]{1,200}\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/u, '<name>+<key id>+<base64 of 33 bytes>')
    // 0x04: a c2sp.org/tlog-cosignature key; a signed-note Ed25519 key (0x01) verifies no cosignature.
    .refine((k) => Buffer.from(k.slice(-44), 'base64')[0] === 0x04, 'not a cosignature/v1 key'),
  timeoutMs: z.number().int().min(100).max(120_000).default(5_000),
  enrol: z.strictObject({ witnessctl: z.string().min(1), db: z.string().min(1) }).optional(),
});

/** The configured witnesses; none when the variable is unset. Throws ConfigError naming the variable. */
export function witnessesConfig(value: string | undefined): WitnessConfig[] {
  if (value === undefined || value.trim() === '') return [];
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    throw new ConfigError(VARIABLE, 'must be a JSON array of {"name", "url", "key"} objects');
  }
  const parsed = z.array(entry).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(VARIABLE, `${issue.path.join('.') || 'value'}: ${issue.message}`);
  }
  const names = parsed.data.map((w) => w.name);
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated) throw new ConfigError(VARIABLE, `witness ${repeated} is listed twice`);
  return parsed.data.map(({ enrol, ...w }) => ({ ...w, ...(enrol ? { enrol } : {}) }));
}
