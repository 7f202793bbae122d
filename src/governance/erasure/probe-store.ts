import type { Db } from 'mongodb';
import type { ContentCipher } from '../../substrate/crypto/content-cipher.js';
import { Collections } from '../../substrate/mongo/collections.js';

/**
 * Verification probes prepared before a purge (samples of the erased texts and their vectors), so that
 * verify can look for them afterwards. They never enter workflow histories, and are destroyed (and their
 * collection compacted) once verification has run.
 */
export interface ErasureProbes {
  ids: string[];
  texts: string[];
  vectors: number[][];
  contentHashes: string[];
  /** Subjects of the erased records: the index is probed for them after the purge. */
  subjects: string[];
}

export interface ProbeStore {
  put(tenant: string, requestId: string, probes: ErasureProbes): Promise<void>;
  get(tenant: string, requestId: string): Promise<ErasureProbes | null>;
  destroy(tenant: string, requestId: string): Promise<void>;
}

/**
 * The samples (texts, and vectors made from them) are erased content: they are sealed together under a data key of
 * the request's own, destroyed with the probes, so that their copies in the database's log die with it.
 */
interface ProbeDoc extends Omit<ErasureProbes, 'vectors' | 'texts'> {
  _id: string;
  tenant: string;
  /** `{ texts, vectors }` sealed; the vectors as Float32 base64 (the local server stores no nested arrays). */
  samples: string;
}

const keyIdOf = (requestId: string) => `probe:${requestId}`;

const encode = (v: number[]) => Buffer.from(new Float32Array(v).buffer).toString('base64');
const decode = (s: string) => {
  const bytes = Buffer.from(s, 'base64');
  return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
};

export function createMongoProbeStore(db: Db, cipher: ContentCipher): ProbeStore {
  const probes = db.collection<ProbeDoc>(Collections.erasureProbes);
  return {
    async put(tenant, requestId, value) {
      const { texts, vectors, ...rest } = value;
      const content = JSON.stringify({ texts, vectors: vectors.map(encode) });
      const [sealed] = await cipher.sealAll([{ _id: keyIdOf(requestId), tenant, content }]);
      await probes.replaceOne({ _id: requestId }, { tenant, ...rest, samples: sealed!.content }, { upsert: true });
    },
    async get(tenant, requestId) {
      const doc = await probes.findOne({ _id: requestId });
      if (!doc || doc.tenant !== tenant) return null;
      const opened = await cipher.openOne({ _id: keyIdOf(requestId), tenant, content: doc.samples });
      // Samples whose key is gone prove nothing any more: read as none.
      const samples = opened
        ? (JSON.parse(opened.content) as { texts: string[]; vectors: string[] })
        : { texts: [], vectors: [] };
      return {
        ids: doc.ids,
        texts: samples.texts,
        vectors: samples.vectors.map(decode),
        contentHashes: doc.contentHashes,
        subjects: doc.subjects ?? [],
      };
    },
    async destroy(tenant, requestId) {
      await cipher.shred(tenant, [keyIdOf(requestId)]);
      await probes.deleteOne({ _id: requestId, tenant });
    },
  };
}
