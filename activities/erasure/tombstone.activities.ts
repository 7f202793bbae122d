import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { sampleKey, sentenceSamples } from '../../src/governance/erasure/copy-findings.js';
import type { TombstoneSpec } from '../../src/substrate/tombstones/tombstone-store.js';
import { keyedStoredHash } from '../../src/substrate/content-hash.js';
import {
  beating,
  isEvent,
  together,
  type ErasureActivityDeps,
  type ErasureContext,
  type ErasureRef,
} from './erasure-context.js';

/** Erased records read with their content at once, to be split into sentences. */
const SENTENCE_READ = 200;
/** Erased sentences kept per probe batch (one sealed document). */
export const SENTENCE_BATCH = 500;
/** Of the erased sentences, those embedded as vector probes (per request, across rounds). */
const VECTOR_SAMPLE = 10;

/** What tells two erased sentences apart as the probes compare them, kept short: a digest, never the sentence. */
export const sentenceDigest = (text: string) => createHash('sha256').update(sampleKey(text)).digest('base64');

/** Steps 4a and 5: the records marked deleted and tombstoned, and their sentences kept as the verification's probes. */
export function createTombstoneActivities(deps: ErasureActivityDeps, ctx: ErasureContext) {
  /**
   * Keeps every sentence of the records (those of five words or more; a text without one as itself) as probes, in
   * sealed batches: the records are read a few hundred at a time, in id order, and only each sentence's digest is
   * held, to leave out those already kept (by an earlier round, or an attempt of this one that died). Each attempt
   * writes batches of its own, so a retry never overwrites what a dead attempt kept of records it can no longer
   * read. Returns the first sentences read (kept or not), as many as `wanted`, to embed as vector probes.
   */
  async function keepSentences(
    ref: ErasureRef & { round?: number },
    memoryIds: readonly string[],
    eventIds: readonly string[],
    wanted: number,
  ): Promise<string[]> {
    const seen = new Set<string>();
    for await (const batch of deps.probes.sentences(ref.tenant, ref.requestId)) {
      for (const text of batch) seen.add(sentenceDigest(text));
    }
    const batch = { round: ref.round ?? 1, attempt: Context.current().info.attempt, seq: 0 };
    let pending: string[] = [];
    const flush = async () => {
      await deps.probes.putSentences(ref.tenant, ref.requestId, batch, pending);
      batch.seq += 1;
      pending = [];
    };
    const sample: string[] = [];
    const ids = [...[...memoryIds].sort(), ...[...eventIds].sort()];
    for (let at = 0; at < ids.length; at += SENTENCE_READ) {
      const slice = ids.slice(at, at + SENTENCE_READ);
      const [m, e] = await Promise.all([
        deps.memories.getMany(
          ref.tenant,
          slice.filter((id) => !isEvent(id)),
        ),
        deps.events.getMany(ref.tenant, slice.filter(isEvent)),
      ]);
      const records = [...m, ...e].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
      // By sentence: a copy elsewhere in the tenant repeats a sentence of the erased text, not always all of it.
      for (const text of records.flatMap((r) => sentenceSamples(r.content))) {
        if (sample.length < wanted && !sample.includes(text)) sample.push(text);
        const digest = sentenceDigest(text);
        if (seen.has(digest)) continue;
        seen.add(digest);
        pending.push(text);
        if (pending.length >= SENTENCE_BATCH) await flush();
      }
    }
    if (pending.length > 0) await flush();
    return sample;
  }

  return {
    /**
     * Step 4a and 5: mark deleted and write tombstones before any byte is purged, so nothing erased is served
     * or re-derived in between. Also prepares the verification probes from the records' content.
     */
    async markDeletedAndTombstone(
      ref: ErasureRef & { round?: number },
    ): Promise<{ marked: number; tombstones: number }> {
      return beating(() =>
        ctx.step(ref, 'tombstone', async () => {
          const ids = (await deps.sets.get(ref.tenant, ref.requestId, 'erase')).ids;
          // What the closure read of each record (no content); whatever it did not keep (a marking retried after it
          // used them, a request from before they were kept) is read now, without content too.
          const wanted = new Set(ids);
          const known = await deps.sets.getFacts(ref.tenant, ref.requestId);
          const knownEvents = known.events.filter((e) => wanted.has(e._id));
          const knownMemories = known.memories.filter((m) => wanted.has(m._id));
          const seen = new Set([...knownEvents, ...knownMemories].map((r) => r._id));
          const unread = ids.filter((id) => !seen.has(id));
          const events = [...knownEvents, ...(await deps.events.factsOf(ref.tenant, unread.filter(isEvent)))];
          const memories = [
            ...knownMemories,
            ...(await deps.memories.factsOf(
              ref.tenant,
              unread.filter((id) => !isEvent(id)),
            )),
          ];
          const specs: TombstoneSpec[] = [
            ...events.flatMap((e): TombstoneSpec[] => [
              { kind: 'idempotency-key', parts: [e.idempotencyKey] },
              { kind: 'record', parts: [e._id] },
              ...e.subjects.map((s): TombstoneSpec => ({ kind: 'subject-content', parts: [s, e.contentHash] })),
            ]),
            ...memories.flatMap((m): TombstoneSpec[] => [
              { kind: 'record', parts: [m._id] },
              ...m.subjects.map((s): TombstoneSpec => ({ kind: 'subject-content', parts: [s, m.contentHash] })),
            ]),
          ];
          // Probes first: once the records are purged their content is gone. A later round (a released hold, a
          // record that raced the fence) adds its own sentences to those of earlier rounds not yet verified.
          const earlier = await deps.probes.get(ref.tenant, ref.requestId);
          // Sentences of collateral records (other subjects' records swept in by lineage) are not probed: they
          // repeat what those subjects' own records rightly keep, and would be found as copies that are none.
          const collateral = new Set((await deps.sets.get(ref.tenant, ref.requestId, 'collateral')).ids);
          const probes = {
            ids: [...new Set([...(earlier?.ids ?? []), ...ids])],
            // Sentences an earlier round kept here, before every sentence was kept in batches of its own.
            texts: earlier?.texts ?? [],
            vectors: earlier?.vectors ?? [],
            // Keyed: a row written before keying holds the plain digest, which the probes never keep.
            contentHashes: [
              ...new Set([
                ...(earlier?.contentHashes ?? []),
                ...[...memories, ...events].map((r) => keyedStoredHash(deps.macs, ref.tenant, r)),
              ]),
            ],
            hashKeyId: deps.macs.keyId,
            subjects: [
              ...new Set([
                ...(earlier?.subjects ?? []),
                ...memories.flatMap((m) => m.subjects),
                ...events.flatMap((e) => e.subjects),
              ]),
            ],
          };
          // The probe document before its batches of sentences: whatever finds it (the verification, a restore's
          // reapply) destroys them with it, even after a crash in between.
          await deps.probes.put(ref.tenant, ref.requestId, probes);
          const sampled = await keepSentences(
            ref,
            memories.filter((m) => !collateral.has(m._id)).map((m) => m._id),
            events.filter((e) => !collateral.has(e._id)).map((e) => e._id),
            Math.max(0, VECTOR_SAMPLE - probes.vectors.length),
          );
          if (sampled.length > 0) {
            const vectors = [...probes.vectors, ...(await deps.embedder.embed(sampled))];
            await deps.probes.put(ref.tenant, ref.requestId, { ...probes, vectors });
          }
          const tombstones = await deps.tombstones.write(ref.tenant, ref.requestId, specs);
          const memoryIds = memories.map((m) => m._id);
          // MongoDB is marked and the index documents are deleted side by side: nothing orders the two (each only
          // narrows what is served), both are idempotent, and both are done before the step ends. The index
          // documents go now rather than at the purge: a `_bulk` of deletes costs far less than re-indexing every
          // document with a new status, and a record being erased has nothing left to be found for.
          const [marked, index] = await together(
            (async () =>
              // The records just read start the marking; a record moved since then is caught by its transition guard.
              // Their rows are purged next: the marking claims each move by its guard and leaves the rows alone.
              (await deps.memories.markDeleted(ref.tenant, memoryIds, ref.requestId, memories, { rowsAtPurge: true })) +
              (await deps.events.markDeleted(
                ref.tenant,
                events.map((e) => e._id),
              )))(),
            memoryIds.length > 0
              ? deps.index.purge(ref.tenant, memoryIds)
              : Promise.resolve({ deleted: 0, notFound: 0, indices: [] }),
          );
          // A retry finds the documents its predecessor deleted gone: every record of the set was read just now, so
          // each missing document counts as this request's (the purge's own retries count the same way).
          const indexDocs = Context.current().info.attempt > 1 ? index.deleted + index.notFound : index.deleted;
          await deps.requests.update(ref.tenant, ref.requestId, {
            [`indexDeletedAtMark.${ref.round ?? 1}`]: indexDocs,
            [`indexReach.${ref.round ?? 1}.mark`]: index.indices,
          } as Record<string, unknown>);
          // Used: the facts go (they name subjects and content hashes); a retried marking reads what it needs.
          await deps.sets.dropFacts(ref.tenant, ref.requestId);
          await deps.audit.append({
            tenant: ref.tenant,
            actor: `erasure:${ref.requestId}`,
            action: 'erasure.marked-deleted',
            target: ref.requestId,
            outcome: 'ok',
            details: { records: ids.length, tombstones: specs.length },
            // Of this round's set, not of what this attempt wrote: a retry finds its tombstones already there.
            idempotencyKey: `erasure:${ref.requestId}:tombstone:${ref.round ?? 1}:${ids.length}`,
          });
          return { marked, tombstones, records: ids.length, indexDocs };
        }),
      );
    },
  };
}
