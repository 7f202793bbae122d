import type { Collection, Db, FindCursor } from 'mongodb';
import type { EventOrigin, EventRecord, Sensitivity } from '../model/records.js';
import type { ContentCipher } from '../crypto/content-cipher.js';
import { type TenantMacs } from '../fingerprint.js';
import { sha256Hex } from '../../shared/sha256.js';
import { keyedDigest, keyedIdempotencyKey, storedIdempotencyKeyForms } from '../content-hash.js';
import { findByIds, findMatching, writtenBy } from '../mongo/bounded-scan.js';
import type { WrittenTogether } from '../model/written-together.js';
import { createRecordMarks } from '../mongo/record-marks.js';
import { Collections, duplicateKeysOnly, findOwn, isDuplicateKey, mapBounded, ownRow } from '../mongo/collections.js';

export interface NewEvent {
  tenant: string;
  namespace: string;
  source: string;
  externalId: string;
  content: string;
  subjects: string[];
  sensitivity: Sensitivity;
  trustTier: number;
  occurredAt: Date;
  recordedBy: string;
  /** The owner scope: `principal:<writer>` or `tenant`. */
  scope: string;
  /** The staged batch whose admission records it. */
  stageId?: string;
  /** Where its content came from (absent: the conversation). */
  origin?: EventOrigin;
}

export type RecordOutcome = 'created' | 'duplicate' | 'correction';

/** The immutable event log. */
export interface EventStore {
  ensureIndexes(): Promise<void>;
  /** Idempotent: a re-delivery returns the existing event; new content for a known external id is a correction. */
  record(event: NewEvent): Promise<{ event: EventRecord; outcome: RecordOutcome }>;
  /**
   * `record` for many events, each answered as `record` answers it, in order: the lookups of all of them in parallel,
   * then one sealing and one unordered insert for those not recorded yet. Events of one external id are recorded in
   * their order, each after the one before (a later one corrects an earlier one).
   */
  recordMany(events: readonly NewEvent[]): Promise<{ event: EventRecord; outcome: RecordOutcome }[]>;
  /** Makes the data keys of events about to be recorded, in one round trip (see `ContentCipher.prepare`). */
  prepare(tenant: string, events: readonly Pick<NewEvent, 'source' | 'externalId' | 'content'>[]): Promise<void>;
  get(tenant: string, id: string): Promise<EventRecord | null>;
  /** The id an event of this plain idempotency key is recorded under in the tenant (see `eventIdOf`). */
  idOf(tenant: string, idempotencyKey: string): string;
  /** Ids of the tenant's events that name the subject: live ones, or also those marked deleted but not yet purged. */
  idsBySubject(tenant: string, subject: string, options?: { includeDeleted?: boolean }): Promise<string[]>;
  /** The tenant's events that name the subject, deleted or not, opened: `idsBySubject` and `getMany` in one read. */
  allBySubject(tenant: string, subject: string): Promise<EventRecord[]>;
  /** Ids of events holding any of these stored content hashes (a bounded pass over the tenant when they are many). */
  idsByContentHashes(tenant: string, contentHashes: readonly string[]): Promise<string[]>;
  /** Events recorded within [from, to). */
  idsByRecordedAt(tenant: string, from: Date, to: Date): Promise<string[]>;
  getMany(tenant: string, ids: readonly string[], written?: WrittenTogether): Promise<EventRecord[]>;
  /** `getMany` without the content: what an erasure decides on and tombstones. */
  factsOf(tenant: string, ids: readonly string[]): Promise<EventFacts[]>;
  /**
   * The subject's live events in `scopes` that occurred at or before `before`, latest first, at most `limit`: the
   * history a derivation audit searches. Events under a legal hold are left out (nothing may be derived from them).
   */
  historyOf(
    tenant: string,
    subject: string,
    /** The scopes the reader may read: other principals' events are never read, and use none of the budget. */
    scopes: readonly string[],
    before: Date,
    limit: number,
    /** Stop once the events read hold this many bytes of content (then `truncated`). */
    maxBytes?: number,
  ): Promise<{ events: EventRecord[]; truncated: boolean }>;
  markDeleted(tenant: string, ids: readonly string[]): Promise<number>;
  restrict(tenant: string, ids: readonly string[], holdId: string): Promise<void>;
  /**
   * Marks events as contradicted by a rectification (`correctedBy`); idempotent, a mark document beside the row that
   * no row rewrite can drop. Returns how many of `ids` carry the mark (missing ones do not).
   */
  markCorrected(tenant: string, ids: readonly string[], requestId: string): Promise<number>;
  purge(tenant: string, ids: readonly string[]): Promise<number>;
  /**
   * Takes back those of `ids` that the stage's admission recorded (not an equal event another write recorded first),
   * because the write met an erasure's fence: their data keys destroyed first, then their rows, so that no copy of
   * the row kept elsewhere (the WAL, a backup) opens. Idempotent; returns the rows deleted.
   */
  withdrawRecordedBy(tenant: string, stageId: string, ids: readonly string[]): Promise<number>;
  /** `withdrawRecordedBy` for events a write recorded itself (it did not find them recorded already). */
  withdraw(tenant: string, ids: readonly string[]): Promise<number>;
}

/** An event's fields that scope, hold and tombstone decisions need: no content. */
export type EventFacts = Pick<
  EventRecord,
  '_id' | 'tenant' | 'subjects' | 'namespace' | 'contentHash' | 'idempotencyKey' | 'hashKeyId'
>;
const FACT_FIELDS = { _id: 1, tenant: 1, subjects: 1, namespace: 1, contentHash: 1, idempotencyKey: 1, hashKeyId: 1 };

/** The plain idempotency key: what an event's id is derived from; stored only keyed (`keyedIdempotencyKey`). */
export function idempotencyKeyOf(source: string, externalId: string, contentDigest: string): string {
  return sha256Hex(`${source}\u0000${externalId}\u0000${contentDigest}`);
}

/**
 * The stored form of a new event: its id derived from the plain idempotency key, its content hash and idempotency
 * key keyed under the tenant's current key (`content-hash.ts`), with that key's id. Pure.
 */
export function eventRecordOf(
  macs: TenantMacs,
  input: NewEvent,
  recordedAt: Date,
  correctionOf: string | null,
): EventRecord {
  const digest = sha256Hex(input.content);
  const idempotencyKey = idempotencyKeyOf(input.source, input.externalId, digest);
  return {
    _id: eventIdOf(macs, input.tenant, idempotencyKey),
    tenant: input.tenant,
    namespace: input.namespace,
    source: input.source,
    externalId: input.externalId,
    contentHash: keyedDigest(macs, input.tenant, digest),
    idempotencyKey: keyedIdempotencyKey(macs, input.tenant, idempotencyKey),
    hashKeyId: macs.keyId,
    subjects: input.subjects,
    content: input.content,
    sensitivity: input.sensitivity,
    trustTier: input.trustTier,
    occurredAt: input.occurredAt,
    recordedAt,
    correctionOf,
    recordedBy: input.recordedBy,
    scope: input.scope,
    ...(input.stageId ? { stageId: input.stageId } : {}),
    ...(input.origin !== undefined && input.origin !== 'interaction' ? { origin: input.origin } : {}),
    deleted: false,
  };
}

/**
 * An event's id: keyed under the tenant's own key, so that one who holds a certificate or an audit export that
 * names it cannot confirm a guessed (source, external id, content). Derived once, when the event is written; an
 * event written before ids were keyed keeps its plain-hash id, and is found again by its idempotency key.
 */
export function eventIdOf(macs: TenantMacs, tenant: string, idempotencyKey: string): string {
  return `evt_${macs.of(tenant, 'event-id', idempotencyKey).slice(0, 32)}`;
}

/** Lookups in flight at once while many events are recorded, and events per `insertMany`. */
const RECORD_CONCURRENCY = 32;
const INSERT_CHUNK = 1000;
/** Events under one (source, external id) that `recordMany` reads at once to find a re-delivery among them. */
const UNDER_ONE_ID = 32;

/**
 * The rounds `recordMany` writes `events` in (indexes): the n-th event of each (tenant, source, external id) in round
 * n, so that each finds the one before it recorded.
 */
function recordRounds(events: readonly NewEvent[]): number[][] {
  const rounds: number[][] = [];
  const seen = new Map<string, number>();
  events.forEach((e, i) => {
    const key = `${e.tenant}\u0000${e.source}\u0000${e.externalId}`;
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    (rounds[n] ??= []).push(i);
  });
  return rounds;
}

/** Events whose content is read at a time while a history is walked: one key lookup round per batch. */
const HISTORY_BATCH = 64;

/** Cursors each sorted by `occurredAt` descending, merged into one stream in that order. */
async function* latestFirst(cursors: readonly FindCursor<EventRecord>[]): AsyncGenerator<EventRecord> {
  const heads = await Promise.all(cursors.map((c) => c.next()));
  for (;;) {
    let at = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i];
      if (head && (at < 0 || head.occurredAt.getTime() > heads[at]!.occurredAt.getTime())) at = i;
    }
    if (at < 0) return;
    yield heads[at]!;
    heads[at] = await cursors[at]!.next();
  }
}

/**
 * The event log in MongoDB. Content is sealed under each event's own data key before it is written, and opened when
 * read; an event whose key is destroyed reads as erased (absent), even before its row is purged.
 */
export function createMongoEventStore(db: Db, macs: TenantMacs, cipher: ContentCipher): EventStore {
  const events = db.collection<EventRecord>(Collections.events);
  // Holds and correction marks are documents of their own, laid over the rows as they are read (`record-marks.ts`).
  const marks = createRecordMarks(db);
  const readable = async (tenant: string, found: EventRecord[]) => cipher.openAll(await marks.overlay(tenant, found));
  const withdraw = async (tenant: string, ids: readonly string[], only: { stageId?: string } = {}) => {
    if (ids.length === 0) return 0;
    await cipher.shred(tenant, ids);
    const results = await mapBounded([...ids], 32, (id) =>
      events.deleteOne({ ...ownRow<EventRecord>(tenant, id), ...only }),
    );
    await marks.purge(tenant, ids);
    return results.reduce((n, r) => n + r.deletedCount, 0);
  };
  /** The ids of `ids` that are the tenant's events (a mark is never left on a record that is not there). */
  const present = async (tenant: string, ids: readonly string[]) =>
    (await findByIds(events, tenant, ids, { projection: { _id: 1 } })).map((e) => e._id);
  /**
   * The event stored under this plain idempotency key in any form the key may be stored in: under each configured
   * key, or plain on a row not yet re-keyed. One equality lookup per form, all at once (a new event is looked for in
   * every form), the first form found winning, the current first (the local server would read the tenant's every
   * event for an `$in`).
   */
  const recordedUnder = async (tenant: string, plainKey: string) => {
    const found = await Promise.all(
      storedIdempotencyKeyForms(macs, tenant, plainKey).map((idempotencyKey) =>
        events.findOne({ tenant, idempotencyKey }),
      ),
    );
    return found.find((e) => e !== null) ?? null;
  };
  /** A re-delivery of an event whose key is already shredded is answered with what the caller sent. */
  const openedOr = async (stored: EventRecord, sent: NewEvent) =>
    (await cipher.openOne(stored)) ?? { ...stored, content: sent.content };
  /**
   * What recording an event needs to know before writing it, in one query rather than one per key form and one
   * more for the latest: the events already recorded under its (source, external id), latest first, which hold
   * every event its idempotency key can name. Only when more than `UNDER_ONE_ID` are recorded there does a missing
   * key form get its own lookups. The full row is read only for a re-delivery.
   */
  const lookedUp = async (input: NewEvent, plainKey: string) => {
    const recorded = await events
      .find(
        { tenant: input.tenant, source: input.source, externalId: input.externalId },
        { projection: { _id: 1, idempotencyKey: 1 } },
      )
      .sort({ recordedAt: -1 })
      .limit(UNDER_ONE_ID)
      .toArray();
    const earlier = recorded[0] ?? null;
    const forms = storedIdempotencyKeyForms(macs, input.tenant, plainKey);
    const match = forms.map((form) => recorded.find((e) => e.idempotencyKey === form)).find((e) => e !== undefined);
    if (match) return { existing: await findOwn(events, input.tenant, match._id), earlier };
    if (recorded.length < UNDER_ONE_ID) return { existing: null, earlier };
    return { existing: await recordedUnder(input.tenant, plainKey), earlier };
  };
  type Recorded = { event: EventRecord; outcome: RecordOutcome };
  /**
   * One round of `recordMany`: events of distinct external ids, recorded after `after` (the round before's time), so
   * that a correction in the next round is never recorded in the same millisecond as what it corrects.
   */
  const recordRound = async (inputs: readonly NewEvent[], after: Date): Promise<Recorded[]> => {
    const looked = await mapBounded([...inputs], RECORD_CONCURRENCY, async (input) => {
      const plainKey = idempotencyKeyOf(input.source, input.externalId, sha256Hex(input.content));
      return { input, plainKey, ...(await lookedUp(input, plainKey)) };
    });
    const recordedAt = new Date(Math.max(Date.now(), after.getTime() + 1));
    const fresh = looked.flatMap((l, i) =>
      l.existing ? [] : [{ ...l, i, event: eventRecordOf(macs, l.input, recordedAt, l.earlier?._id ?? null) }],
    );
    // Inserted unordered: an event another write recorded meanwhile fails alone, as a duplicate key.
    const raced = new Map<number, unknown>();
    for (let at = 0; at < fresh.length; at += INSERT_CHUNK) {
      const chunk = fresh.slice(at, at + INSERT_CHUNK);
      try {
        await events.insertMany(await cipher.sealAll(chunk.map((f) => f.event)), { ordered: false });
      } catch (error) {
        const duplicates = duplicateKeysOnly(error);
        if (duplicates === null) throw error;
        for (const index of duplicates) raced.set(chunk[index]!.i, error);
      }
    }
    const inserted = new Map(fresh.map((f) => [f.i, f.event]));
    return mapBounded([...looked.entries()], RECORD_CONCURRENCY, async ([i, l]): Promise<Recorded> => {
      const event = inserted.get(i);
      if (event && !raced.has(i)) return { event, outcome: event.correctionOf ? 'correction' : 'created' };
      const stored = l.existing ?? (await recordedUnder(l.input.tenant, l.plainKey));
      if (!stored) throw raced.get(i);
      return { event: await openedOr(stored, l.input), outcome: 'duplicate' };
    });
  };
  return {
    async ensureIndexes() {
      await events.createIndex({ tenant: 1, idempotencyKey: 1 }, { unique: true });
      await events.createIndex({ tenant: 1, source: 1, externalId: 1 });
      await events.createIndex({ tenant: 1, subjects: 1 });
      await events.createIndex({ tenant: 1, contentHash: 1 });
      await events.createIndex({ tenant: 1, stageId: 1 });
      await marks.ensureIndexes();
    },
    async record(input) {
      const plainKey = idempotencyKeyOf(input.source, input.externalId, sha256Hex(input.content));
      // By idempotency key, not id: a re-delivery of an event written under the earlier id scheme is a duplicate.
      const { existing, earlier } = await lookedUp(input, plainKey);
      if (existing) return { event: await openedOr(existing, input), outcome: 'duplicate' };
      const event = eventRecordOf(macs, input, new Date(), earlier?._id ?? null);
      try {
        await events.insertOne((await cipher.sealAll([event]))[0]!);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        const winner = await recordedUnder(input.tenant, plainKey);
        if (winner) return { event: await openedOr(winner, input), outcome: 'duplicate' };
        throw error;
      }
      return { event, outcome: event.correctionOf ? 'correction' : 'created' };
    },
    async recordMany(inputs) {
      const results: Recorded[] = new Array(inputs.length);
      let after = new Date(0);
      for (const round of recordRounds(inputs)) {
        const recorded = await recordRound(
          round.map((i) => inputs[i]!),
          after,
        );
        round.forEach((i, j) => (results[i] = recorded[j]!));
        after = new Date(Math.max(after.getTime(), ...recorded.map((r) => r.event.recordedAt.getTime())));
      }
      return results;
    },
    idOf: (tenant, idempotencyKey) => eventIdOf(macs, tenant, idempotencyKey),
    prepare: (tenant, batch) =>
      cipher.prepare(
        tenant,
        batch.map((e) => eventIdOf(macs, tenant, idempotencyKeyOf(e.source, e.externalId, sha256Hex(e.content)))),
      ),
    async get(tenant, id) {
      const event = await findOwn(events, tenant, id);
      return event ? ((await readable(tenant, [event]))[0] ?? null) : null;
    },
    async idsBySubject(tenant, subject, options = {}) {
      const docs = await events.find({ tenant, subjects: subject }, { projection: { _id: 1, deleted: 1 } }).toArray();
      return docs.filter((d) => options.includeDeleted || !d.deleted).map((d) => d._id);
    },
    async allBySubject(tenant, subject) {
      return readable(tenant, await events.find({ tenant, subjects: subject }).toArray());
    },
    async idsByContentHashes(tenant, contentHashes) {
      const docs = await findMatching(events, tenant, 'contentHash', contentHashes, {
        projection: { _id: 1, contentHash: 1 },
      });
      return docs.map((d) => d._id);
    },
    async idsByRecordedAt(tenant, from, to) {
      const docs = await events
        .find({ tenant, recordedAt: { $gte: from, $lt: to } }, { projection: { _id: 1 } })
        .toArray();
      return docs.map((d) => d._id);
    },
    getMany: async (tenant, ids, written) => {
      const found = await findByIds(events, tenant, ids, writtenBy(written));
      return readable(tenant, found);
    },
    factsOf: (tenant, ids) =>
      findByIds(events as unknown as Collection<EventFacts>, tenant, ids, { projection: FACT_FIELDS }),
    async historyOf(tenant, subject, scopes, before, limit, maxBytes = Infinity) {
      // One query per scope, each top-level equality and range (the local server pushes them down, where it would
      // read the subject's whole history for an `$in`), merged latest first. Read as cursors, so that a byte budget
      // stops the read rather than trimming what was already held in memory.
      const cursors = [...new Set(scopes)].map((scope) =>
        events
          .find({ tenant, subjects: subject, scope, occurredAt: { $lte: before } })
          .sort({ occurredAt: -1 })
          .limit(limit + 1),
      );
      const docs: EventRecord[] = [];
      let bytes = 0;
      let truncated = false;
      const take = async (batch: EventRecord[]) => {
        for (const doc of await cipher.openAll(batch)) {
          const size = Buffer.byteLength(doc.content, 'utf8');
          if (docs.length === limit || bytes + size > maxBytes) return false;
          bytes += size;
          docs.push(doc);
        }
        return true;
      };
      try {
        let batch: EventRecord[] = [];
        for await (const doc of latestFirst(cursors)) {
          batch.push(doc);
          if (batch.length < HISTORY_BATCH) continue;
          if (!(await take(batch))) {
            truncated = true;
            break;
          }
          batch = [];
        }
        if (!truncated && batch.length > 0 && !(await take(batch))) truncated = true;
      } finally {
        await Promise.all(cursors.map((c) => c.close()));
      }
      const live = (await marks.overlay(tenant, docs)).filter((e) => !e.deleted && (e.restrictedBy?.length ?? 0) === 0);
      return { events: live, truncated };
    },
    async markDeleted(tenant, ids) {
      const results = await mapBounded([...ids], 32, (id) =>
        events.updateOne({ ...ownRow<EventRecord>(tenant, id), deleted: false }, { $set: { deleted: true } }),
      );
      return results.reduce((n, r) => n + r.modifiedCount, 0);
    },
    async restrict(tenant, ids, holdId) {
      await marks.add(tenant, await present(tenant, ids), 'hold', holdId);
    },
    async markCorrected(tenant, ids, requestId) {
      const marked = await present(tenant, ids);
      await marks.add(tenant, marked, 'corrected', requestId);
      return marked.length;
    },
    async purge(tenant, ids) {
      const results = await mapBounded([...ids], 32, (id) => events.deleteOne(ownRow<EventRecord>(tenant, id)));
      await marks.purge(tenant, ids);
      return results.reduce((n, r) => n + r.deletedCount, 0);
    },
    async withdrawRecordedBy(tenant, stageId, ids) {
      const recorded = (await findByIds(events, tenant, ids, { projection: { _id: 1, stageId: 1 } })).filter(
        (e) => e.stageId === stageId,
      );
      return withdraw(
        tenant,
        recorded.map((e) => e._id),
        { stageId },
      );
    },
    withdraw: (tenant, ids) => withdraw(tenant, ids),
  };
}
