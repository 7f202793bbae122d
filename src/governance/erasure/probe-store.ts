import type { Db } from 'mongodb';
import type { ContentCipher } from '../../substrate/crypto/content-cipher.js';
import { Collections, findOwn } from '../../substrate/mongo/collections.js';

/**
 * Verification probes prepared before a purge (the erased sentences, samples of them as vectors), so that verify
 * can look for them afterwards. They never enter workflow histories, and are destroyed (and their collection
 * compacted) once verification has run.
 */
export interface ErasureProbes {
  ids: string[];
  /**
   * Sentences kept in the probe document itself: those of requests marked before every sentence was kept, in
   * batches of their own (`putSentences`). `sentences` reads them first.
   */
  texts: string[];
  vectors: number[][];
  /** Keyed hashes of the erased content (`content-hash.ts`), never the plain SHA-256. */
  contentHashes: string[];
  /** The key `contentHashes` were made under; absent on probes kept before keying (plain, until re-keyed). */
  hashKeyId?: string;
  /** Subjects of the erased records: the index is probed for them after the purge. */
  subjects: string[];
}

/** Where a batch of sentences belongs: the round and the attempt that kept it, and its place in that attempt. */
export interface SentenceBatch {
  round: number;
  attempt: number;
  seq: number;
}

export interface ProbeStore {
  put(tenant: string, requestId: string, probes: ErasureProbes): Promise<void>;
  get(tenant: string, requestId: string): Promise<ErasureProbes | null>;
  /** Keeps one batch of erased sentences, sealed like the samples; keeping the same batch again replaces it. */
  putSentences(tenant: string, requestId: string, batch: SentenceBatch, texts: readonly string[]): Promise<void>;
  /**
   * The erased sentences, a batch at a time in order (the probe document's own first); only a few batches are read
   * at once. Batches may repeat a sentence (kept by two attempts, or by two rounds' records).
   */
  sentences(tenant: string, requestId: string): AsyncIterable<string[]>;
  /** Destroys the probes and every batch of sentences. */
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

/** A batch of erased sentences, sealed under the probes' key; its id sorts by round, then place. */
interface SentenceDoc {
  _id: string;
  tenant: string;
  /** The sentences, sealed (JSON array). */
  texts: string;
}

const keyIdOf = (requestId: string) => `probe:${requestId}`;
/** Every sentence batch of a request has an id under this prefix (`~` sorts after every id under it). */
const batchPrefix = (requestId: string) => `${requestId}/sentences/`;
const batchIdOf = (requestId: string, { round, attempt, seq }: SentenceBatch) =>
  `${batchPrefix(requestId)}${[round, attempt, seq].map((n) => String(n).padStart(9, '0')).join('/')}`;
/** Sentence batches read per query. */
const BATCH_PAGE = 4;

const encode = (v: number[]) => Buffer.from(new Float32Array(v).buffer).toString('base64');
const decode = (s: string) => {
  const bytes = Buffer.from(s, 'base64');
  return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
};

export function createMongoProbeStore(db: Db, cipher: ContentCipher): ProbeStore {
  const probes = db.collection<ProbeDoc>(Collections.erasureProbes);
  const batches = db.collection<SentenceDoc>(Collections.erasureProbes);
  const within = (requestId: string, after?: string) => ({
    $gt: after ?? batchPrefix(requestId),
    $lt: `${batchPrefix(requestId)}~`,
  });
  async function get(tenant: string, requestId: string): Promise<ErasureProbes | null> {
    const doc = await findOwn(probes, tenant, requestId);
    if (!doc) return null;
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
      ...(doc.hashKeyId !== undefined ? { hashKeyId: doc.hashKeyId } : {}),
      subjects: doc.subjects ?? [],
    };
  }
  return {
    async put(tenant, requestId, value) {
      const { texts, vectors, ...rest } = value;
      const content = JSON.stringify({ texts, vectors: vectors.map(encode) });
      const [sealed] = await cipher.sealAll([{ _id: keyIdOf(requestId), tenant, content }]);
      await probes.replaceOne({ _id: requestId }, { tenant, ...rest, samples: sealed!.content }, { upsert: true });
    },
    get,
    async putSentences(tenant, requestId, batch, texts) {
      const [sealed] = await cipher.sealAll([{ _id: keyIdOf(requestId), tenant, content: JSON.stringify(texts) }]);
      await batches.replaceOne(
        { _id: batchIdOf(requestId, batch) },
        { tenant, texts: sealed!.content },
        { upsert: true },
      );
    },
    async *sentences(tenant, requestId) {
      const own = await get(tenant, requestId);
      if (own && own.texts.length > 0) yield own.texts;
      let after: string | undefined;
      for (;;) {
        // A page at a time, each a query of its own: no cursor stays open while the caller probes a batch.
        const page = await batches
          .find({ _id: within(requestId, after), tenant }, { sort: { _id: 1 }, limit: BATCH_PAGE })
          .toArray();
        for (const doc of page) {
          // A batch whose key is gone proves nothing any more: read as none.
          const opened = await cipher.openOne({ _id: keyIdOf(requestId), tenant, content: doc.texts });
          const texts = opened ? (JSON.parse(opened.content) as string[]) : [];
          if (texts.length > 0) yield texts;
        }
        if (page.length < BATCH_PAGE) return;
        after = page[page.length - 1]!._id;
      }
    },
    async destroy(tenant, requestId) {
      await cipher.shred(tenant, [keyIdOf(requestId)]);
      await batches.deleteMany({ _id: within(requestId), tenant });
      await probes.deleteOne({ _id: requestId, tenant });
    },
  };
}
