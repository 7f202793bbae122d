import type { Db } from 'mongodb';
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

interface ProbeDoc extends Omit<ErasureProbes, 'vectors'> {
  _id: string;
  tenant: string;
  /** Float32 vectors, base64: the wire protocol's local server stores no nested arrays. */
  vectors: string[];
}

const encode = (v: number[]) => Buffer.from(new Float32Array(v).buffer).toString('base64');
const decode = (s: string) => {
  const bytes = Buffer.from(s, 'base64');
  return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
};

export function createMongoProbeStore(db: Db): ProbeStore {
  const probes = db.collection<ProbeDoc>(Collections.erasureProbes);
  return {
    async put(tenant, requestId, value) {
      await probes.replaceOne(
        { _id: requestId },
        { tenant, ...value, vectors: value.vectors.map(encode) },
        { upsert: true },
      );
    },
    async get(tenant, requestId) {
      const doc = await probes.findOne({ _id: requestId });
      if (!doc || doc.tenant !== tenant) return null;
      return {
        ids: doc.ids,
        texts: doc.texts,
        vectors: doc.vectors.map(decode),
        contentHashes: doc.contentHashes,
        subjects: doc.subjects ?? [],
      };
    },
    async destroy(tenant, requestId) {
      await probes.deleteOne({ _id: requestId, tenant });
    },
  };
}
