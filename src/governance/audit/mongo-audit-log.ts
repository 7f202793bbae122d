/**
 * The audit log on MongoDB (FerretDB locally), without transactions.
 *
 * Each entry's `_id` is `<tenant>:<seq, zero-padded>`, so the primary key itself forbids two entries at one seq:
 * an appender seals `head.seq + 1` over `head.hash` and inserts; losing a race is an E11000, after which it reads
 * the entry that took the seq and tries the next. A seq is only ever claimed on top of an entry that was read or
 * written, so the chain has no gaps. A unique (tenant, idempotencyKey) index makes retries return the entry
 * already written.
 *
 * Within one process, appends to a tenant are queued and flushed as one ordered `insertMany` (group commit):
 * concurrent callers in a process never race each other, and the head is kept in memory, so an append usually
 * costs one round trip. Across processes the E11000 protocol above keeps the chain whole, and a process on a long
 * winning streak pauses now and then so that the others get in (races for a seq are not otherwise fair).
 */
import type { Collection, Db } from 'mongodb';
import { Collections, duplicateKeysOnly, mapBounded } from '../../substrate/mongo/collections.js';
import { chainLinkId, findChainHead } from '../../substrate/mongo/hash-chain.js';
import { DomainError, ErrorType } from '../../shared/errors.js';
import { GENESIS_HASH, sealEntry } from './audit-chain.js';
import { normalizeAuditInput, type NormalizedAuditInput } from './audit-input.js';
import type { AuditEntry, AuditEntryInput, AuditLog } from './audit-log.port.js';
import { BoundedMap } from '../../shared/bounded-map.js';
import { auditTenants, registerAuditTenant } from './log-tree/audit-tenants.js';

/** Tenants whose chain head and append streak one process keeps in memory. */
const TENANT_CACHE_CAPACITY = 10_000;

/** The MongoDB audit log, plus its index set-up (call once at the composition root). */
export interface MongoAuditLog extends AuditLog {
  ensureIndexes(): Promise<void>;
}

export interface MongoAuditLogOptions {
  clock?: () => Date;
  /** Most entries per `insertMany` in one flush. */
  maxBatch?: number;
  /**
   * How long one flush may keep losing races to other processes before it gives up with a Conflict. Races are
   * not fair — a process appending back to back keeps winning — so this bounds latency, not attempts.
   */
  maxContendedMs?: number;
  /** Upper bound of the jittered pause between attempts after a lost race (0: none). */
  backoffCapMs?: number;
  /** Told how long each append (or batch of appends) took to become durable, for the operator's latency series. */
  onAppended?: (seconds: number) => void;
}

type AuditDoc = AuditEntry & { _id: string };

interface Pending {
  input: NormalizedAuditInput;
  /** The caller chose the key, so it may already be written (a retry). Generated keys cannot be. */
  callerKey: boolean;
  resolve(entry: AuditEntry): void;
  reject(error: unknown): void;
}

const RANGE_BATCH = 500;
const RANGE_CONCURRENCY = 16;
/** A range covering more than 1/SCAN_FRACTION of the chain is read with one query rather than by `_id`. */
const SCAN_FRACTION = 4;
/** A flush starting within this long of the previous one's end continues a streak… */
const BACK_TO_BACK_MS = 3;
/** …and a streak this long earns the others a pause. */
const STREAK_MS = 200;
const COURTESY_MAX_MS = 50;
/** Seqs read at once when catching up after a lost race. */
const CATCH_UP_WINDOW = 8;

interface Streak {
  start: number;
  lastEnd: number;
  /** Moving average of an uncontended flush, ms. */
  insertMs: number;
}

/** `_id` of a tenant's entry at `seq`. */
export function auditEntryId(tenant: string, seq: number): string {
  return chainLinkId(tenant, seq);
}

/** Creates the MongoDB-backed audit log. */
export function createMongoAuditLog(db: Db, options: MongoAuditLogOptions = {}): MongoAuditLog {
  const clock = options.clock ?? (() => new Date());
  const maxBatch = options.maxBatch ?? 1000;
  const maxContendedMs = options.maxContendedMs ?? 120_000;
  const backoffCapMs = options.backoffCapMs ?? 8;
  const audit: Collection<AuditDoc> = db.collection<AuditDoc>(Collections.audit);
  /**
   * Last entry this process wrote or read per tenant: a lower bound of the head (entries are never removed). Bounded:
   * a forgotten head is read again from the store; a forgotten streak only skips one courtesy pause.
   */
  const heads = new BoundedMap<string, AuditEntry | null>(TENANT_CACHE_CAPACITY);
  // Pending appends: an entry exists only while a flush is due, and is removed once the queue drains.
  const queues = new Map<string, Pending[]>();
  const streaks = new BoundedMap<string, Streak>(TENANT_CACHE_CAPACITY);
  const tenants = auditTenants(db);
  const registered = new BoundedMap<string, true>(TENANT_CACHE_CAPACITY);

  const byId = async (tenant: string, seq: number): Promise<AuditEntry | null> => {
    const doc = await audit.findOne({ _id: auditEntryId(tenant, seq) });
    return doc ? toEntry(doc) : null;
  };

  /**
   * The head, searched upward from a known entry: probe seq+1, +2, +4… then bisect. Equality lookups on `_id` are
   * fast on FerretDB (a sort is not), and a known lower bound is usually the head itself: one probe.
   */
  const findHead = (tenant: string, known: AuditEntry | null): Promise<AuditEntry | null> =>
    findChainHead((seq) => byId(tenant, seq), known);

  /**
   * The head after losing the race for `taken`: reads `taken` and the next few seqs in parallel, since the winner
   * has usually appended again by now. Reading one seq per round trip, a loser falls further behind every round.
   */
  const catchUp = async (tenant: string, taken: number, known: AuditEntry | null): Promise<AuditEntry | null> => {
    const seqs = Array.from({ length: CATCH_UP_WINDOW }, (_, i) => taken + i);
    const found = await Promise.all(seqs.map((seq) => byId(tenant, seq)));
    const firstMissing = found.findIndex((entry) => entry === null);
    if (firstMissing === 0) return findHead(tenant, known);
    if (firstMissing > 0) return found[firstMissing - 1]!;
    return findHead(tenant, found[CATCH_UP_WINDOW - 1]!);
  };

  const currentHead = async (tenant: string): Promise<AuditEntry | null> => {
    if (heads.has(tenant)) return heads.get(tenant) ?? null;
    const head = await findHead(tenant, null);
    remember(tenant, head);
    return head;
  };

  const remember = (tenant: string, entry: AuditEntry | null): void => {
    const known = heads.get(tenant);
    if (!known || (entry && entry.seq > known.seq)) heads.set(tenant, entry);
  };

  /**
   * Races for a seq are not fair: a process appending back to back seals its next entry from memory while a loser
   * is still reading the entry that beat it, so without this a loser can wait out another process's whole burst.
   * After a streak of back-to-back flushes, pause for about two inserts — the time a loser needs to read and insert.
   */
  const courtesy = async (tenant: string): Promise<void> => {
    const streak = streaks.get(tenant);
    if (!streak) return;
    const now = performance.now();
    if (now - streak.lastEnd > BACK_TO_BACK_MS) streak.start = now;
    else if (now - streak.start > STREAK_MS) {
      await sleep(Math.min(COURTESY_MAX_MS, 2 * streak.insertMs));
      streak.start = performance.now();
    }
  };

  /** Writes `batch` (one tenant, keys unique within it) in chain order; resolves every caller. */
  const writeBatch = async (tenant: string, batch: Pending[]): Promise<void> => {
    // Once per tenant in this process: the checkpoint publisher visits the tenants registered.
    if (!registered.has(tenant)) {
      await registerAuditTenant(tenants, tenant);
      registered.set(tenant, true);
    }
    await courtesy(tenant);
    const started = performance.now();
    const conflicts = await writeChained(tenant, batch);
    const ended = performance.now();
    const streak = streaks.get(tenant) ?? { start: started, lastEnd: ended, insertMs: ended - started };
    // A flush that lost races did not win a streak; its duration is not an insert's.
    if (conflicts > 0) streak.start = ended;
    else streak.insertMs = 0.8 * streak.insertMs + 0.2 * (ended - started);
    streak.lastEnd = ended;
    streaks.set(tenant, streak);
  };

  /** The race itself: seal from the head, insert in order, and on E11000 chase the head and seal the rest again. */
  const writeChained = async (tenant: string, batch: Pending[]): Promise<number> => {
    let pending = batch;
    let conflicts = 0;
    let contendedSince = 0;
    let head = await currentHead(tenant);
    while (pending.length > 0) {
      const docs: AuditDoc[] = [];
      let prev = head;
      const at = clock().toISOString();
      for (const p of pending) {
        const entry = seal(p.input, (prev?.seq ?? 0) + 1, prev?.hash ?? GENESIS_HASH, at);
        docs.push({ _id: auditEntryId(tenant, entry.seq), ...entry });
        prev = entry;
      }
      const failedAt = await insertOrdered(audit, docs);
      const written = failedAt ?? docs.length;
      for (let i = 0; i < written; i++) pending[i]!.resolve(toEntry(docs[i]!));
      if (written > 0) {
        head = toEntry(docs[written - 1]!);
        remember(tenant, head);
      }
      if (failedAt === null) return conflicts;

      // docs[failedAt] hit a unique index: either its key is already written (a retry) or its seq was taken.
      const failed = pending[failedAt]!;
      const existing = failed.callerKey
        ? await audit.findOne({ tenant, idempotencyKey: failed.input.idempotencyKey })
        : null;
      if (existing) {
        failed.resolve(toEntry(existing));
        pending = pending.slice(failedAt + 1);
        continue;
      }
      pending = pending.slice(failedAt);
      if (conflicts++ === 0) contendedSince = Date.now();
      else if (Date.now() - contendedSince > maxContendedMs) {
        throw new DomainError(
          ErrorType.Conflict,
          `audit append: lost ${conflicts} races for the next seq in ${maxContendedMs} ms (tenant ${tenant})`,
        );
      }
      // Back off a little (jittered, so contenders spread out), then catch up with the head in one round trip.
      if (conflicts > 1 && backoffCapMs > 0) await sleep(Math.random() * Math.min(backoffCapMs, 2 ** (conflicts - 1)));
      head = await catchUp(tenant, docs[failedAt]!.seq, head);
      remember(tenant, head);
    }
    return conflicts;
  };

  /** Drains a tenant's queue, one batch at a time; only one drain per tenant runs in this process. */
  const drain = async (tenant: string): Promise<void> => {
    for (;;) {
      const queue = queues.get(tenant);
      if (!queue || queue.length === 0) {
        queues.delete(tenant);
        return;
      }
      const batch = dedupe(queue.splice(0, maxBatch));
      try {
        await writeBatch(tenant, batch);
      } catch (error) {
        // What was written is unknown: forget the head so the next batch reads it again.
        heads.delete(tenant);
        for (const p of batch) p.reject(error);
      }
    }
  };

  const enqueue = (inputs: AuditEntryInput[], single: boolean): Promise<AuditEntry>[] => {
    // All inputs are validated before any is queued: a bad one refuses the call and writes nothing.
    const items = inputs.map((input, index) => normalizeAuditInput(input, single ? '' : `entries.${index}.`));
    const started = new Set<string>();
    const promises = items.map(
      (item) =>
        new Promise<AuditEntry>((resolve, reject) => {
          const tenant = item.input.tenant;
          let queue = queues.get(tenant);
          if (!queue) {
            queue = [];
            queues.set(tenant, queue);
            started.add(tenant);
          }
          queue.push({ ...item, resolve, reject });
        }),
    );
    // Started after every item is queued, so that one appendMany lands in one flush and stays contiguous.
    for (const tenant of started) void drain(tenant);
    return promises;
  };

  return {
    async ensureIndexes() {
      await audit.createIndex({ tenant: 1, seq: 1 }, { unique: true });
      await audit.createIndex({ tenant: 1, idempotencyKey: 1 }, { unique: true });
    },

    async append(input) {
      const started = performance.now();
      const [promise] = enqueue([input], true);
      const entry = await promise!;
      options.onAppended?.((performance.now() - started) / 1000);
      return entry;
    },

    async appendMany(inputs) {
      if (inputs.length === 0) return [];
      const started = performance.now();
      const entries = await Promise.all(enqueue(inputs, false));
      options.onAppended?.((performance.now() - started) / 1000);
      return entries;
    },

    async head(tenant) {
      // Always asks the database: another process may have appended since this one last looked.
      const head = await findHead(tenant, heads.get(tenant) ?? null);
      remember(tenant, head);
      return head;
    },

    async *entries(tenant, range = {}) {
      const head = await findHead(tenant, heads.get(tenant) ?? null);
      remember(tenant, head);
      const headSeq = head?.seq ?? 0;
      const from = Math.max(1, range.fromSeq ?? 1);
      const to = range.toSeq;
      if (to !== undefined && to < from) return;
      if (to !== undefined && to <= headSeq && (to - from + 1) * SCAN_FRACTION < headSeq) {
        // A small slice below the head: `_id` equality lookups in bounded parallel batches, the fast path on
        // FerretDB, where a range filter reads every entry of the tenant. A missing entry is skipped, not papered
        // over: the verifier then reports the gap.
        for (let seq = from; seq <= to; seq += RANGE_BATCH) {
          const seqs = Array.from({ length: Math.min(RANGE_BATCH, to - seq + 1) }, (_, i) => seq + i);
          for (const entry of await mapBounded(seqs, RANGE_CONCURRENCY, (s) => byId(tenant, s))) {
            if (entry) yield entry;
          }
        }
        return;
      }
      // Most of the chain, or up to its end: one sorted range query (FerretDB reads the tenant's entries once,
      // ~3× faster per entry than single lookups, measured; MongoDB serves it from the (tenant, seq) index). Not
      // bounded by the head found by probing, which a deleted entry could make look shorter: whatever is stored
      // is exported, so a gap shows.
      const seq = to === undefined ? { $gte: from } : { $gte: from, $lte: to };
      for await (const doc of audit.find({ tenant, seq }).sort({ seq: 1 }).batchSize(RANGE_BATCH)) yield toEntry(doc);
    },
  };
}

/** Inserts in order; returns the index of the first document refused by a unique index, or null when all went in. */
async function insertOrdered(audit: Collection<AuditDoc>, docs: AuditDoc[]): Promise<number | null> {
  try {
    if (docs.length === 1) await audit.insertOne(docs[0]!);
    else await audit.insertMany(docs, { ordered: true });
    return null;
  } catch (error) {
    // An ordered insert stops at its first failure: one duplicate, at the position the race was lost.
    const duplicates = duplicateKeysOnly(error);
    if (!duplicates) throw error;
    return docs.length === 1 ? 0 : duplicates[0]!;
  }
}

/** Later inputs repeating a key within one flush resolve to the first one's entry. */
function dedupe(batch: Pending[]): Pending[] {
  const first = new Map<string, Pending>();
  const unique: Pending[] = [];
  for (const p of batch) {
    const seen = first.get(p.input.idempotencyKey);
    if (!seen) {
      first.set(p.input.idempotencyKey, p);
      unique.push(p);
      continue;
    }
    const { resolve: resolveSeen, reject: rejectSeen } = seen;
    seen.resolve = (entry) => {
      resolveSeen(entry);
      p.resolve(entry);
    };
    seen.reject = (error) => {
      rejectSeen(error);
      p.reject(error);
    };
  }
  return unique;
}

function seal(input: NormalizedAuditInput, seq: number, prevHash: string, at: string): AuditEntry {
  return sealEntry({
    tenant: input.tenant,
    seq,
    at,
    actor: input.actor,
    action: input.action,
    target: input.target ?? null,
    outcome: input.outcome,
    details: input.details,
    idempotencyKey: input.idempotencyKey,
    prevHash,
  });
}

function toEntry(doc: AuditDoc): AuditEntry {
  const { _id: _ignored, ...entry } = doc;
  return entry;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
