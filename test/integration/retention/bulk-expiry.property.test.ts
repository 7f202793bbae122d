/**
 * The sweep's bulk move (`expireMany`: guards in one insert, one update per record) against the one-by-one move it
 * replaced (`expire` per record: read, guard, update), on the real database, with other movers at work.
 *
 * - At the step boundary (property): between the sweep's read of a page and its moves, disputes, an erasure and a
 *   crashed earlier sweep attempt move or claim some of the page's records. Two tenants get the same records and the
 *   same interference, one swept in bulk, one one by one: their records' statuses and slots, their transition logs
 *   and their audit trails must be the same, entry for entry.
 * - Truly concurrent (property): two sweeps of the same page in bulk, and the movers at once or after them. Whatever
 *   the interleaving, every record is still there, every record the erasure named is deleted and its marking counts
 *   each of them, every record's transition log is one chain of moves from its first version, its status is the
 *   chain's end, and the audit holds one `memory.expired` per record moved to expired and one `memory.expiry-void`
 *   per due record that was not — never both, never twice. The erasure marks with its rows rewritten at once, or left
 *   to the purge (`rowsAtPurge`) as the erasure workflow marks them: then the records are read through the store.
 * - The interleaving that property found, every time: the local server updates a document by reading it and then
 *   writing the whole document back by `_id`, so a sweep's slot move that read a row before an erasure moved it to
 *   `deleted` could write the row back as it read it, behind the erasure's claimed guard. The row's lock is held in
 *   PostgreSQL while both writes queue behind it, the erasure's first.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetentionActivities } from '../../../activities/retention.activities.js';
import type { Runtime } from '../../../app/runtime.js';
import { createMongoAuditLog } from '../../../src/governance/audit/mongo-audit-log.js';
import { ERASURE_PENDING, expiryBucketOf } from '../../../src/governance/retention/expiry-bucket.js';
import { createExpiryQueue, type ExpiryQueue } from '../../../src/governance/retention/expiry-queue.js';
import type { MemoryStatus } from '../../../src/shared/lifecycle.js';
import { createMongoMemoryStore } from '../../../src/substrate/memories/memory-store.js';
import { Collections, isDuplicateKey, mapBounded } from '../../../src/substrate/mongo/collections.js';
import { testConfig, testRuntime, uniqueId } from '../../support/harness.js';
import { lockRow } from '../../support/row-lock.js';

const HOUR = 3600_000;

interface Row {
  _id: string;
  tenant: string;
  status: MemoryStatus;
  version: number;
  expiresAt: Date;
  expiryBucket: string | null;
  statusReason: string | null;
}
interface Guard {
  _id: string;
  from: string;
  to: string;
  reason: string | null;
}

let runtime: Runtime;
const tenants: string[] = [];
const now = new Date();
const bucket = expiryBucketOf(new Date(now.getTime() - 3 * HOUR));
const until = expiryBucketOf(now);

beforeAll(async () => {
  runtime = testRuntime();
  await createExpiryQueue(runtime.db, runtime.cipher).ensureIndexes();
});

afterAll(async () => {
  await mapBounded(tenants, 2, async (tenant) => {
    for (const name of [Collections.memories, Collections.transitions, Collections.audit, Collections.deletionMarks]) {
      await runtime.db.collection(name).deleteMany({ tenant });
    }
  });
  await runtime.close();
});

/** `n` active records expired three hours ago, in their hour bucket; ids the same across tenants but for the prefix. */
async function seed(tenant: string, n: number): Promise<string[]> {
  tenants.push(tenant);
  const expiresAt = new Date(now.getTime() - 3 * HOUR + 60_000);
  const docs = Array.from({ length: n }, (_, k) => ({
    _id: `${tenant}:m${String(k).padStart(3, '0')}`,
    tenant,
    status: 'active' as MemoryStatus,
    version: 1,
    expiresAt,
    expiryBucket: bucket,
    statusReason: null,
    subjects: [`s${k}`],
    updatedAt: now,
  }));
  await runtime.db.collection(Collections.memories).insertMany(docs as never[]);
  return docs.map((d) => d._id);
}

const local = (tenant: string, id: string) => id.slice(tenant.length);

interface Interference {
  disputed: number[];
  erased: number[];
  /** Records whose move to expired an earlier, crashed attempt claimed (guard written, record not yet moved). */
  claimed: number[];
}

/**
 * Moves some of the page's records as other processes would, and claims some as a crashed sweep attempt did. The
 * erasure marks its records with their rows rewritten at once, or (`rowsAtPurge`, as the erasure workflow marks them)
 * left for the purge. Returns how many records the erasure's marking reports moved to deleted.
 */
async function interfere(
  tenant: string,
  ids: readonly string[],
  plan: Interference,
  marking: { rowsAtPurge?: boolean } = {},
): Promise<number> {
  const store = createMongoMemoryStore(runtime.db, runtime.cipher);
  const pick = (ks: number[]) => [...new Set(ks)].filter((k) => k < ids.length).map((k) => ids[k]!);
  const erased = new Set(pick(plan.erased));
  const claimed = pick(plan.claimed).filter((id) => !erased.has(id));
  if (claimed.length > 0) {
    await runtime.db
      .collection<Guard & { tenant: string; at: Date }>(Collections.transitions)
      .insertMany(
        claimed.map((id) => ({
          _id: `${id}:1`,
          tenant,
          from: 'active',
          to: 'expired',
          reason: 'retention-expiry',
          at: now,
        })),
        { ordered: false },
      )
      // Racing a sweep, its own claim of the same version may already be there: then there is no crashed attempt.
      .catch((error: unknown) => {
        if (!isDuplicateKey(error)) throw error;
      });
  }
  const claimedSet = new Set(claimed);
  for (const id of pick(plan.disputed)) {
    if (!claimedSet.has(id) && !erased.has(id)) await store.transition(tenant, id, 'active', 'disputed', 'dispute:d1');
  }
  return erased.size > 0 ? store.markDeleted(tenant, [...erased], 'er1', [], marking) : 0;
}

/**
 * The page's records, transition log and audit trail, with the tenant taken out of every id. `through: 'store'` reads
 * each record's status and version as the memory store serves them (a row an open deletion mark claimed reads
 * deleted); by default they are the rows as stored.
 */
async function stateOf(tenant: string, through: 'rows' | 'store' = 'rows') {
  const stored = await runtime.db.collection<Row>(Collections.memories).find({ tenant }).sort({ _id: 1 }).toArray();
  const served =
    through === 'store'
      ? new Map(
          (
            await createMongoMemoryStore(runtime.db, runtime.cipher).factsOf(
              tenant,
              stored.map((r) => r._id),
            )
          ).map((f) => [f._id, f]),
        )
      : null;
  const rows = stored.map((r) => {
    const facts = served?.get(r._id);
    return facts ? { ...r, status: facts.status, version: facts.version, statusReason: facts.statusReason } : r;
  });
  const guards = await runtime.db
    .collection<Guard>(Collections.transitions)
    .find({ tenant })
    .sort({ _id: 1 })
    .toArray();
  const audit: { action: string; target: string | null; outcome: string; details: unknown }[] = [];
  for await (const e of createMongoAuditLog(runtime.db).entries(tenant)) {
    audit.push({
      action: e.action,
      target: e.target && local(tenant, e.target),
      outcome: e.outcome,
      details: e.details,
    });
  }
  audit.sort((a, b) => `${a.action}${a.target}`.localeCompare(`${b.action}${b.target}`));
  return {
    rows: rows.map((r) => ({
      id: local(tenant, r._id),
      status: r.status,
      version: r.version,
      slot: r.expiryBucket,
      reason: r.statusReason,
    })),
    guards: guards.map((g) => ({ id: local(tenant, g._id), from: g.from, to: g.to, reason: g.reason })),
    audit,
  };
}

/** The sweep's activities over `queue`, with an erasure port that is never reached by marking. */
function activitiesOver(queue: ExpiryQueue) {
  return createRetentionActivities({
    queue,
    sweeps: null as never,
    audit: createMongoAuditLog(runtime.db),
    erasures: { file: () => Promise.reject(new Error('not in this test')), open: () => Promise.resolve(0) },
  });
}

/** The queue as it was: every record moved by its own read, guard and update. */
function oneByOne(queue: ExpiryQueue): ExpiryQueue {
  return {
    ...queue,
    expireMany: (_tenant, entries) => Promise.resolve({ expired: [], retry: entries.map((e) => e.id) }),
  };
}

/** Runs `between` after the page is read and before anything on it moves. */
function withReadBoundary(queue: ExpiryQueue, between: () => Promise<unknown>): ExpiryQueue {
  let done = false;
  return {
    ...queue,
    async take(tenant, slot, limit) {
      const entries = await queue.take(tenant, slot, limit);
      if (!done && slot !== ERASURE_PENDING) {
        done = true;
        await between();
      }
      return entries;
    },
  };
}

const interference = (n: number) =>
  fc.record({
    disputed: fc.array(fc.nat(n - 1), { maxLength: 8 }),
    erased: fc.array(fc.nat(n - 1), { maxLength: 8 }),
    claimed: fc.array(fc.nat(n - 1), { maxLength: 5 }),
  });

describe('bulk expiry against one-by-one expiry (property, real database)', () => {
  it('leaves the same statuses, slots, transition log and audit trail when movers strike between read and move', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 5, max: 40 }).chain((n) => fc.tuple(fc.constant(n), interference(n))),
        async ([n, plan]) => {
          const bulkTenant = uniqueId('bulk');
          const singleTenant = uniqueId('single');
          const bulkIds = await seed(bulkTenant, n);
          const singleIds = await seed(singleTenant, n);
          const queue = createExpiryQueue(runtime.db, runtime.cipher);
          const page = { bucket, until, pageSize: 100 };
          const bulk = await activitiesOver(
            withReadBoundary(queue, () => interfere(bulkTenant, bulkIds, plan)),
          ).markExpiredPage({ tenant: bulkTenant, ...page });
          const single = await activitiesOver(
            withReadBoundary(oneByOne(queue), () => interfere(singleTenant, singleIds, plan)),
          ).markExpiredPage({
            tenant: singleTenant,
            ...page,
          });
          expect(bulk).toEqual(single);
          const [a, b] = [await stateOf(bulkTenant), await stateOf(singleTenant)];
          expect(a.rows).toEqual(b.rows);
          expect(a.guards).toEqual(b.guards);
          expect(a.audit).toEqual(b.audit);
          // And the outcome is the one intended, record by record: erased ones deleted, those another mover disputed
          // first disputed, and every other one — a crashed attempt's claim included — expired and waiting for erasure.
          const pick = (ks: number[]) =>
            new Set([...new Set(ks)].filter((k) => k < n).map((k) => local(bulkTenant, bulkIds[k]!)));
          const erased = pick(plan.erased);
          const claimed = new Set([...pick(plan.claimed)].filter((id) => !erased.has(id)));
          const disputed = new Set([...pick(plan.disputed)].filter((id) => !claimed.has(id) && !erased.has(id)));
          const intended = (id: string) => (erased.has(id) ? 'deleted' : disputed.has(id) ? 'disputed' : 'expired');
          expect(a.rows).toHaveLength(n);
          expect(a.rows.map((r) => [r.id, r.status])).toEqual(a.rows.map((r) => [r.id, intended(r.id)]));
          const expired = a.rows.filter((r) => r.status === 'expired');
          expect(bulk.expired).toBe(expired.length);
          for (const r of expired) expect(r.slot).toBe(ERASURE_PENDING);
        },
      ),
      { numRuns: 8 },
    );
  });

  it.each([
    { marking: 'rewrites their rows at once', rowsAtPurge: false, movers: 'with the sweeps' },
    {
      marking: 'leaves their rows to the purge (rowsAtPurge), as an erasure does',
      rowsAtPurge: true,
      movers: 'with the sweeps',
    },
    { marking: 'rewrites their rows at once', rowsAtPurge: false, movers: 'after the sweeps' },
    // Then no sweep finishes the erasure's moves in the rows: only the store's reads show them.
    {
      marking: 'leaves their rows to the purge (rowsAtPurge), as an erasure does',
      rowsAtPurge: true,
      movers: 'after the sweeps',
    },
  ] as const)(
    'keeps every record, one chain of moves, erased ones deleted, with one audit entry per outcome, under two concurrent sweeps and movers $movers, when the erasure $marking',
    async ({ rowsAtPurge, movers }) => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 10, max: 40 }).chain((n) => fc.tuple(fc.constant(n), interference(n))),
          async ([n, plan]) => {
            const tenant = uniqueId(rowsAtPurge ? 'race-at-purge' : 'race');
            const ids = await seed(tenant, n);
            const queue = createExpiryQueue(runtime.db, runtime.cipher);
            const page = { tenant, bucket, until, pageSize: 100 };
            const sweeps = () =>
              Promise.all([activitiesOver(queue).markExpiredPage(page), activitiesOver(queue).markExpiredPage(page)]);
            let marked: number;
            if (movers === 'after the sweeps') {
              await sweeps();
              marked = await interfere(tenant, ids, plan, { rowsAtPurge });
            } else {
              [, marked] = await Promise.all([sweeps(), interfere(tenant, ids, plan, { rowsAtPurge })]);
            }
            const { rows, guards, audit } = await stateOf(tenant, rowsAtPurge ? 'store' : 'rows');
            // Every record is still there, and each one the erasure named is deleted, whatever moved it first.
            expect(rows.map((r) => r.id)).toEqual(ids.map((id) => local(tenant, id)));
            const erased = new Set([...new Set(plan.erased)].filter((k) => k < n).map((k) => local(tenant, ids[k]!)));
            expect(rows.filter((r) => erased.has(r.id)).map((r) => [r.id, r.status])).toEqual(
              [...erased].sort().map((id) => [id, 'deleted']),
            );
            // The marking reports every record it was given as moved to deleted: none of them was deleted before it.
            expect(marked).toBe(erased.size);
            for (const row of rows) {
              const chain = guards
                .filter((g) => g.id.startsWith(`${row.id}:`))
                .sort((x, y) => Number(x.id.split(':').pop()) - Number(y.id.split(':').pop()));
              const versions = chain.map((g) => Number(g.id.split(':').pop()));
              expect(versions).toEqual(chain.map((_, k) => k + 1));
              chain.forEach((g, k) => expect(g.from).toBe(k === 0 ? 'active' : chain[k - 1]!.to));
              // A claim whose record was never updated (a crashed attempt finished by nobody) would leave the row behind.
              expect(row.version).toBe(chain.length + 1);
              expect(row.status).toBe(chain.at(-1)?.to ?? 'active');
              if (!erased.has(row.id)) expect(row.status).not.toBe('deleted');
              const expiredMove = chain.some((g) => g.to === 'expired' && g.reason === 'retention-expiry');
              const entries = audit.filter((e) => e.target === row.id);
              const expiredEntries = entries.filter((e) => e.action === 'memory.expired');
              const voidEntries = entries.filter((e) => e.action === 'memory.expiry-void');
              expect(expiredEntries.length).toBeLessThanOrEqual(1);
              expect(voidEntries.length).toBeLessThanOrEqual(1);
              if (expiredMove) expect(voidEntries).toHaveLength(0);
              else if (expiredEntries.length === 1) expect(voidEntries).toHaveLength(1);
              if (expiredMove) expect(expiredEntries).toHaveLength(1);
              if (row.status === 'expired') expect(row.slot).toBe(ERASURE_PENDING);
            }
            if (rowsAtPurge) await createMongoMemoryStore(runtime.db, runtime.cipher).closeDeletionMark(tenant, 'er1');
          },
        ),
        { numRuns: 6 },
      );
    },
  );

  it('leaves no record behind its erasure when a sweep wrote its slot from a read taken before the erasure’s move', async () => {
    const tenant = uniqueId('stale-slot');
    const [id] = await seed(tenant, 1);
    const store = createMongoMemoryStore(runtime.db, runtime.cipher);
    const queue = createExpiryQueue(runtime.db, runtime.cipher);
    // Expired, still in its hour bucket (a sweep attempt stopped between the move and the slot change).
    expect(await store.transition(tenant, id!, 'active', 'expired', 'retention-expiry')).toBe(true);
    const lock = await lockRow(testConfig().mongo.dbName, Collections.memories, id!);
    let erasure: Promise<number> | undefined;
    let sweep: Promise<boolean> | undefined;
    try {
      // The erasure claims version 2 and its write queues first; then a sweep reads the row (version 2, in its
      // bucket) and its slot write queues behind.
      erasure = store.markDeleted(tenant, [id!], 'er1');
      await lock.waiters(1);
      sweep = queue.move(tenant, id!, bucket, ERASURE_PENDING);
      await lock.waiters(2);
    } finally {
      await lock.release();
    }
    expect(await erasure).toBe(1);
    await sweep;
    const { rows, guards } = await stateOf(tenant);
    expect(guards.map((g) => [g.id, g.to])).toEqual([
      [':m000:1', 'expired'],
      [':m000:2', 'deleted'],
    ]);
    expect(rows.map((r) => [r.version, r.status])).toEqual([[3, 'deleted']]);
  });
});
