/**
 * Where a process that keeps losing the race for a tenant's next seq posts the entries it is trying to append,
 * so that the process that keeps winning writes them in its next batch.
 *
 * Races on the seq are not fair: a process appending back to back seals its next entry from memory while a loser
 * is still reading the entry that beat it, so without help a loser can wait for the whole of another process's
 * burst. The unique (tenant, idempotencyKey) index makes the help safe — whoever writes a posted entry second gets
 * E11000 and finds the first — and the loser keeps racing meanwhile, so it never depends on being helped.
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, mapBounded } from '../../substrate/mongo/collections.js';
import { normalizeAuditInput, type NormalizedAuditInput } from './audit-input.js';

/** The collection of posted entries; it is empty except during contention. */
export const AUDIT_WAITING_COLLECTION = 'audit_waiting';

/** Posted entries, by tenant. */
export interface AuditWaitingRoom {
  ensureIndexes(): Promise<void>;
  /** Posts entries this process cannot get in (an entry posted already stays as it is). */
  post(inputs: NormalizedAuditInput[]): Promise<void>;
  /** Up to `limit` entries posted for the tenant; invalid ones are dropped. */
  peek(tenant: string, limit: number): Promise<NormalizedAuditInput[]>;
  /** Removes posted entries once they are in the chain (or their poster gave up); best effort. */
  remove(inputs: NormalizedAuditInput[]): Promise<void>;
}

interface WaitingDoc {
  _id: string;
  tenant: string;
  input: NormalizedAuditInput;
}

const waitingId = (input: NormalizedAuditInput): string => `${input.tenant}:${input.idempotencyKey}`;

/** The waiting room on MongoDB. */
export function createAuditWaitingRoom(db: Db): AuditWaitingRoom {
  const waiting: Collection<WaitingDoc> = db.collection<WaitingDoc>(AUDIT_WAITING_COLLECTION);
  return {
    async ensureIndexes() {
      await waiting.createIndex({ tenant: 1 });
    },
    async post(inputs) {
      if (inputs.length === 0) return;
      const docs = inputs.map((input) => ({ _id: waitingId(input), tenant: input.tenant, input }));
      try {
        await waiting.insertMany(docs, { ordered: false });
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    },
    async peek(tenant, limit) {
      const docs = await waiting.find({ tenant }).limit(limit).toArray();
      const valid: NormalizedAuditInput[] = [];
      for (const doc of docs) {
        try {
          const { input } = normalizeAuditInput(doc.input);
          if (input.tenant === tenant && input.idempotencyKey === doc.input.idempotencyKey) valid.push(input);
        } catch {
          await waiting.deleteOne({ _id: doc._id }); // never let a bad document fail the batch that adopts it
        }
      }
      return valid;
    },
    async remove(inputs) {
      await mapBounded(inputs, 8, (input) => waiting.deleteOne({ _id: waitingId(input) }).catch(() => undefined));
    },
  };
}
