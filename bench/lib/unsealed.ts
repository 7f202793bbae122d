import type { Runtime } from '../../src/app/runtime.js';
import type { ContentCipher } from '../../src/substrate/crypto/content-cipher.js';

/**
 * The baseline of the sealing figures: the same stores, with content written and read as it is. It keeps the real
 * cipher's vault, so the indexes the services ensure are the same on both sides.
 */
export function unsealedCipher(real: ContentCipher): ContentCipher {
  return {
    vault: real.vault,
    sealAll: async (records) => [...records],
    openAll: async (records) => [...records],
    openOne: async (record) => record,
    warm: async () => undefined,
    prepare: async () => undefined,
    shred: async () => 0,
  };
}

/**
 * A runtime over the same clients whose content is not sealed: services and a worker built on it run the path users
 * run, less the sealing. The sealed runtime owns the clients, so closing this one closes nothing.
 */
export function unsealedRuntime(runtime: Runtime): Runtime {
  return { ...runtime, cipher: unsealedCipher(runtime.cipher), close: async () => undefined };
}
