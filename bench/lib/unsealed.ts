import type { Runtime } from '../../app/runtime.js';
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

/**
 * The real cipher, with the time spent in each of its calls summed by name: how much of a path's time sealing takes,
 * measured inside it rather than as the difference of two noisy runs.
 */
export function timedCipher(real: ContentCipher): { cipher: ContentCipher; spentMs: Record<string, number> } {
  const spentMs: Record<string, number> = {};
  const time =
    <A extends unknown[], R>(name: string, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const started = performance.now();
      try {
        return await call(...args);
      } finally {
        spentMs[name] = (spentMs[name] ?? 0) + performance.now() - started;
      }
    };
  return {
    spentMs,
    cipher: {
      vault: real.vault,
      sealAll: time('sealAll', real.sealAll.bind(real)) as ContentCipher['sealAll'],
      openAll: time('openAll', real.openAll.bind(real)) as ContentCipher['openAll'],
      openOne: time('openOne', real.openOne.bind(real)) as ContentCipher['openOne'],
      prepare: time('prepare', real.prepare.bind(real)),
      shred: time('shred', real.shred.bind(real)),
    },
  };
}
