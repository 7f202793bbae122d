import type { Db } from 'mongodb';
import type { EventFacts } from '../../substrate/events/event-store.js';
import type { MemoryFacts } from '../../substrate/memories/memory-store.js';
import { Collections } from '../../substrate/mongo/collections.js';

/**
 * What the closure read of each record it reached (no content), handed to the marking step so that it does not read
 * every record again: on the local server a read costs per document, whatever its size, and the closure already
 * paid for one. Kept in chunks of many records, dropped once the marking has used them; subject ids and content
 * hashes are in them, so the compaction after the purge rewrites this collection too.
 */
export interface ErasureFacts {
  memories: MemoryFacts[];
  events: EventFacts[];
}

interface FactsDoc extends ErasureFacts {
  _id: string;
  tenant: string;
  requestId: string;
  chunk: number;
}

export interface ErasureFactsStore {
  ensureIndexes(): Promise<void>;
  /** Replaces the request's facts. */
  put(tenant: string, requestId: string, facts: ErasureFacts): Promise<void>;
  /** The request's facts, or empty ones when none are kept (an older request, or dropped after a marking). */
  get(tenant: string, requestId: string): Promise<ErasureFacts>;
  drop(tenant: string, requestId: string): Promise<void>;
}

/** Records per document: far below the 16 MB document limit at a few hundred bytes each. */
const CHUNK = 2000;

export function createMongoErasureFactsStore(db: Db): ErasureFactsStore {
  const facts = db.collection<FactsDoc>(Collections.erasureFacts);
  const drop = async (tenant: string, requestId: string) => {
    await facts.deleteMany({ tenant, requestId });
  };
  return {
    async ensureIndexes() {
      await facts.createIndex({ tenant: 1, requestId: 1 });
    },
    async put(tenant, requestId, { memories, events }) {
      await drop(tenant, requestId);
      const docs: FactsDoc[] = [];
      for (let at = 0, chunk = 0; at < Math.max(memories.length, events.length); at += CHUNK, chunk++) {
        docs.push({
          _id: `${requestId}:${chunk}`,
          tenant,
          requestId,
          chunk,
          memories: memories.slice(at, at + CHUNK),
          events: events.slice(at, at + CHUNK),
        });
      }
      if (docs.length > 0) await facts.insertMany(docs, { ordered: false });
    },
    async get(tenant, requestId) {
      const docs = await facts.find({ tenant, requestId }).sort({ chunk: 1 }).toArray();
      return { memories: docs.flatMap((d) => d.memories), events: docs.flatMap((d) => d.events) };
    },
    drop,
  };
}
