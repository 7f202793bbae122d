/**
 * WebCrypto Ed25519 verdicts, kept for the synchronous shared verifiers to read: each browser verifier checks the
 * signatures it will be asked about beforehand, and answers from here.
 */
export interface VerdictStore {
  /** Verifies `signature` over `message` under the raw 32-byte key, and keeps the verdict under `id`. */
  check(id: string, rawKey: Uint8Array, signature: Uint8Array, message: Uint8Array): Promise<boolean>;
  /** The verdict kept under `id`; false when none was. */
  get(id: string): boolean;
}

export function verdictStore(): VerdictStore {
  const verdicts = new Map<string, boolean>();
  return {
    async check(id, rawKey, signature, message) {
      const key = await crypto.subtle.importKey('raw', copy(rawKey), { name: 'Ed25519' }, false, ['verify']);
      const ok = await crypto.subtle.verify({ name: 'Ed25519' }, key, copy(signature), copy(message));
      verdicts.set(id, ok);
      return ok;
    },
    get: (id) => verdicts.get(id) === true,
  };
}

/** WebCrypto takes ArrayBuffer-backed views. */
const copy = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(bytes);
