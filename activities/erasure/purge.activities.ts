import { Context } from '@temporalio/activity';
import { Collections } from '../../src/substrate/mongo/collections.js';
import { SCAN_MIN_IDS } from '../../src/substrate/mongo/bounded-scan.js';
import type { Selector } from '../../src/governance/erasure/erasure-request.js';
import type { PurgeResult, ReachedIndex } from '../../src/substrate/search/search-index.port.js';
import { planKeyShred } from './key-ranges.js';
import { isEvent, type ErasureActivityDeps, type ErasureContext, type ErasureRef } from './erasure-context.js';

/** What the purge removed so far, per store; heartbeated with its cursor. */
interface PurgeTotals {
  memories: number;
  events: number;
  lineage: number;
  /** Data keys destroyed: the records' content no longer opens anywhere a copy of it is kept. */
  keys: number;
  indexDocs: number;
}

/**
 * What the purge heartbeats: where a retry resumes, the totals up to there, and the key ranges those totals hold
 * (absent from a heartbeat of the per-chunk purge, whose totals hold the chunks before its cursor).
 */
interface PurgeCursor {
  next: number;
  totals: PurgeTotals;
  keyRanges?: string[];
}

/** Well inside the long profile's heartbeat timeout (30 s), as `beating` does. */
const HEARTBEAT_EVERY_MS = 5000;
/** The collections that may hold erased bytes; compacted after the purge. */
export const COMPACTED = [
  Collections.memories,
  Collections.events,
  Collections.lineage,
  Collections.staging,
  Collections.erasureProbes,
  Collections.erasureFacts,
  Collections.reviews,
  Collections.disputeReasons,
  Collections.exposures,
  // The destroyed data keys' rows: rewritten away, so the live table keeps no wrapped copy of them either.
  Collections.dataKeys,
];

/**
 * The request's own records: its clear selector (until it completes), the request, rewritten at every step, and
 * the holds, rewritten at a release. Request and hold rows keep keyed hashes only, but one filed or placed before
 * they did may still name the subject in an old row version.
 */
export const REQUEST_RECORDS = [Collections.erasureSelectors, Collections.erasures, Collections.holds];

/**
 * Once the request will certify `complete`, its clear selector is no longer needed: it is deleted and the request's
 * records compacted (after the request's last rewrite that could matter and after any release of its holds).
 * Returns how many selectors were deleted; records what was compacted on the request. Idempotent.
 */
export async function forgetSelector(deps: ErasureActivityDeps, ref: ErasureRef): Promise<number> {
  const kept = (await deps.requests.selectorOf(ref.tenant, ref.requestId)) ? 1 : 0;
  await deps.requests.dropSelector(ref.tenant, ref.requestId);
  const now = await deps.storage.compact(REQUEST_RECORDS);
  const before = (await deps.requests.get(ref.tenant, ref.requestId))?.compacted ?? [];
  await deps.requests.update(ref.tenant, ref.requestId, { compacted: [...new Set([...before, ...now])] });
  return kept;
}

/** Steps 4 and 5: mark and tombstone, purge, expunge the index, compact the collections. */

/** Step 4b: the erased records' bytes, data keys first, then rows, lineage, index documents and side records. */
export function createPurgeActivities(deps: ErasureActivityDeps, ctx: ErasureContext) {
  const chunk = deps.purgeChunk ?? 500;
  /** Index documents the selector reaches whose memory is missing from MongoDB or already deleted. */
  async function indexOrphans(tenant: string, selector: Selector): Promise<string[]> {
    const reached =
      'subjectId' in selector
        ? (await deps.index.probe(tenant, { subjects: [selector.subjectId] })).bySubject
        : 'memoryIds' in selector
          ? (await deps.index.probe(tenant, { ids: selector.memoryIds })).byId
          : [];
    if (reached.length === 0) return [];
    const standing = await deps.memories.getMany(tenant, reached);
    const live = new Set(standing.filter((m) => m.status !== 'deleted' && m.status !== 'purged').map((m) => m._id));
    return reached.filter((id) => !live.has(id));
  }

  return {
    /**
     * Step 4b: purge index documents, MongoDB records and lineage (edges out of and into erased records) in
     * chunks, heartbeating a cursor; then what side collections keep about them.
     */
    async purgeRecords(
      ref: ErasureRef & { round: number },
    ): Promise<{ memories: number; events: number; lineage: number; indexDocs: number }> {
      return ctx.step(ref, 'purge', async () => {
        const ids = (await deps.sets.get(ref.tenant, ref.requestId, 'erase')).ids;
        const activity = Context.current();
        // A retry resumes at the cursor its predecessor last heartbeated, with the counts up to that cursor.
        const resumed = activity.info.heartbeatDetails as PurgeCursor | undefined;
        const resumeAt = resumed?.next ?? 0;
        // The index documents the marking deleted are this round's purge too (requests marked before that step
        // deleted them find none recorded).
        const req = await ctx.request(ref);
        const atMark = req.indexDeletedAtMark?.[String(ref.round)] ?? 0;
        // The keys each chunk found to destroy, as the first attempt to reach it recorded them.
        const keysFound = req.keysAtPurge?.[String(ref.round)] ?? {};
        const recordKeysFound = (part: string) => async (found: number) => {
          if (keysFound[part] !== undefined) return;
          await deps.requests.update(ref.tenant, ref.requestId, {
            [`keysAtPurge.${ref.round}.${part}`]: found,
          } as Record<string, unknown>);
        };
        /**
         * Destroys the keys of the records from `from` on; returns how many this attempt adds to the totals
         * (`planKeyShred` says which are counted where, at every point an attempt may die).
         */
        let keyRanges = resumed?.keyRanges;
        const shredRest = async (all: readonly string[], from: number): Promise<number> => {
          const plan = planKeyShred(keysFound, from, all.length, resumed?.keyRanges);
          keyRanges = plan.inTotals;
          if (plan.again) await deps.cipher.shred(ref.tenant, all.slice(plan.again.from, plan.again.to));
          if (!plan.fresh) return plan.counted;
          const { from: start, to, range } = plan.fresh;
          return plan.counted + (await deps.cipher.shred(ref.tenant, all.slice(start, to), recordKeysFound(range)));
        };
        const totals: PurgeTotals = {
          memories: 0,
          events: 0,
          lineage: 0,
          keys: 0,
          indexDocs: atMark,
          ...resumed?.totals,
        };
        // Heartbeats are throttled, so a dead predecessor may have purged records past the cursor the server holds.
        // Every record of the erase set existed when it was marked deleted: on a retry, one already gone was purged
        // by this request and counts as such (lineage edges already removed cannot be counted again).
        const retried = activity.info.attempt > 1;
        let issued = 0;
        // Every concrete index the purge reached, with what it deleted there (for the certificate).
        const reached = new Map<string, ReachedIndex>();
        const reach = (result: PurgeResult): number => {
          for (const r of result.indices) {
            const seen = reached.get(r.index);
            reached.set(r.index, { ...r, deleted: (seen?.deleted ?? 0) + r.deleted });
          }
          return result.deleted;
        };
        // Between chunks too (the pass over the lineage below, the side collections after the loop) the activity
        // says it is alive, repeating the last cursor: at a large closure on a loaded machine those take longer than
        // the heartbeat timeout, and every retry would time out at the same place.
        let cursor: PurgeCursor = {
          next: resumeAt,
          totals: { ...totals },
          ...(resumed?.keyRanges ? { keyRanges: resumed.keyRanges } : {}),
        };
        const alive = setInterval(() => activity.heartbeat(cursor), HEARTBEAT_EVERY_MS);
        try {
          // The lineage of what is left to purge, found in one bounded pass (where it pays): each chunk then deletes its
          // edges by _id instead of two queries per record. An edge reaching two chunks goes with the first.
          const left = ids.slice(resumeAt);
          const edges = left.length >= SCAN_MIN_IDS ? await deps.lineage.edgesTouching(ref.tenant, left) : null;
          // Keys before rows, for every record left at once: from here the content opens nowhere — not in a row while
          // it is deleted, nor in the copies the database's log, replicas and backups keep of it. One destroy of the
          // whole rest finds the keys in one pass and rewrites each key page once, where a destroy per chunk found
          // them by a lookup per record and rewrote a page once per chunk it held keys of. The cursor's totals gain
          // these keys with the first chunk's heartbeat (a retry before that counts them from the record).
          totals.keys += await shredRest(ids, resumeAt);
          const forgotten = new Set<string>();
          for (let at = resumeAt; at < ids.length; at += chunk) {
            const slice = ids.slice(at, at + chunk);
            const memoryIds = slice.filter((id) => !isEvent(id));
            const eventIds = slice.filter(isEvent);
            // Index first: once a record is gone from MongoDB, nothing else would point at its document. The marking
            // deleted the documents already; what is found here was indexed again since (a write that raced it).
            if (memoryIds.length > 0) totals.indexDocs += reach(await deps.index.purge(ref.tenant, memoryIds));
            const memories = await deps.memories.purge(ref.tenant, memoryIds);
            totals.memories += retried ? memoryIds.length : memories;
            const events = await deps.events.purge(ref.tenant, eventIds);
            totals.events += retried ? eventIds.length : events;
            if (edges) {
              const own = slice.flatMap((id) => edges.get(id) ?? []).filter((edge) => !forgotten.has(edge));
              for (const edge of own) forgotten.add(edge);
              totals.lineage += await deps.lineage.forgetEdges(ref.tenant, own);
            } else {
              totals.lineage += await deps.lineage.forget(ref.tenant, slice);
            }
            issued += slice.length;
            const next = Math.min(at + chunk, ids.length);
            await deps.requests.setProgress(ref.tenant, ref.requestId, next, ids.length);
            cursor = { next, totals: { ...totals }, ...(keyRanges ? { keyRanges } : {}) };
            activity.heartbeat(cursor);
          }
          // Every marked row is gone: reads no longer need to look the marking's guards up.
          await deps.memories.closeDeletionMark(ref.tenant, ref.requestId);
          // Index documents of the selector whose record is gone or deleted (a crash between stores, an older
          // request): no record names them any more, so only the selector reaches them.
          const orphans = await indexOrphans(ref.tenant, await ctx.selectorOf(ref));
          // A dead attempt's count stands whether or not this one finds them again (it does not once their index
          // documents are gone).
          let orphanKeys = keysFound['orphans'];
          if (orphans.length > 0) {
            // Erased by this request as much as the records: a key left for one would be found by the verification.
            // Keys first, as for the records: only their index documents name them, so a retry after a crash
            // between the two finds them again only while those are there.
            const keys = await deps.cipher.shred(ref.tenant, orphans, recordKeysFound('orphans'));
            orphanKeys ??= keys;
            totals.indexDocs += reach(await deps.index.purge(ref.tenant, orphans));
          }
          totals.keys += orphanKeys ?? 0;
          const probes = await deps.probes.get(ref.tenant, ref.requestId);
          const side = await deps.sideRecords.erase(ref.tenant, {
            ids,
            subjects: probes?.subjects ?? [],
            contentHashes: probes?.contentHashes ?? [],
          });
          const purged = (await deps.sets.get(ref.tenant, ref.requestId, 'purged')).ids;
          await deps.sets.put(ref.tenant, ref.requestId, 'purged', [...new Set([...purged, ...ids, ...orphans])]);
          const counts = {
            ...totals,
            ...prefixed('side', side),
            records: ids.length,
            indexOrphans: orphans.length,
            resumedAt: resumeAt,
            issued,
          };
          const sealing = await deps.cipher.vault.state();
          await deps.requests.update(ref.tenant, ref.requestId, {
            // Shredding is recorded only where a key was destroyed: rows written before sealing had none.
            ...(totals.keys > 0 ? { shredding: { ...sealing, at: new Date() } } : {}),
            [`purgeRounds.${ref.round}`]: counts,
            [`indexReach.${ref.round}.purge`]: [...reached.values()],
            indexName: await deps.index.indexOf(ref.tenant),
          } as Record<string, unknown>);
          return counts;
        } finally {
          clearInterval(alive);
        }
      });
    },
  };
}

function prefixed(prefix: string, counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([k, v]) => [`${prefix}:${k}`, v]));
}
