import type { ProbeResult } from '../../src/governance/certificates/certificate.js';
import { Collections, mapBounded } from '../../src/substrate/mongo/collections.js';
import { beating, isEvent, type ErasureActivityDeps, type ErasureContext, type ErasureRef } from './erasure-context.js';
import { sentenceDigest } from './tombstone.activities.js';
import { probeReader } from '../../src/governance/read/reader.js';
import {
  decideFindings,
  mergeFindings,
  openFindings,
  repeats,
  repeatsAnyOf,
  type FindingProbe,
} from '../../src/governance/erasure/copy-findings.js';

/** Legal grounds whose erasures are filed by the engine itself, with no DPO to decide on copies. */
const STATED_WITHOUT_DPO: ReadonlySet<string> = new Set(['retention-expiry', 'correction']);

/** Text and vector probes in flight: each is a few Elasticsearch round trips, mostly waiting. */
const PROBE_CONCURRENCY = 4;
/**
 * Erased sentences of a window also searched through the governed search as an agent's queries are (one call):
 * every sentence is checked against everything the search could serve, and these exercise its ranked path too.
 */
const SEARCHED_PER_WINDOW = 64;
/** Erased sentences looked for as phrases in one Elasticsearch query (a `bool` of `match_phrase` clauses). */
const PHRASES_PER_QUERY = 64;
/**
 * Erased sentences probed together: the tenant's stored contents are read once per window, and only a window's
 * sentences (and the digests of those already probed) are held at once.
 */
const SENTENCE_WINDOW = 5_000;

export interface Verdict {
  ok: boolean;
  /** Erased records, documents or bytes still reachable: an operator's to look at. */
  found: number;
  /** Live records the selector or lineage reach again (a write that raced the fence): another round erases them. */
  relocated: number;
  deletedDocs: number;
  /** Copies of erased content outside the closure, not yet decided by the DPO: the request waits for one. */
  findings: number;
}

/** Step 6: verify by probes that cannot be satisfied by the purge's own bookkeeping, then certify what was checked. */
export function createVerifyActivities(deps: ErasureActivityDeps, ctx: ErasureContext) {
  return {
    /**
     * Step 6a: look for what was erased by id, text, vector, content hash and subject, directly and in everything
     * the governed search could serve; read `_segments` as it is; and run the selector and lineage again. Probes are
     * destroyed once they prove the erasure.
     */
    async verifyErasure(ref: ErasureRef): Promise<Verdict> {
      let verdict: Verdict = { ok: false, found: 0, relocated: 0, deletedDocs: 0, findings: 0 };
      await beating(() =>
        ctx.step(ref, 'verify', async () => {
          const selector = await ctx.selectorOf(ref);
          const probes = await deps.probes.get(ref.tenant, ref.requestId);
          const erased = new Set((await deps.sets.get(ref.tenant, ref.requestId, 'purged')).ids);
          const held = new Set((await deps.sets.get(ref.tenant, ref.requestId, 'held')).ids);
          const memoryIds = [...erased].filter((id) => !isEvent(id));
          const results: ProbeResult[] = [];
          // The concrete indices the text and vector probes ran on, named in their results.
          const ranOn = { text: new Set<string>(), vector: new Set<string>() };

          // Rows, not readable records: a row whose key is gone reads as erased through the stores, and must still
          // be found here if it was left behind.
          const remaining = [
            ...(await deps.memories.factsOf(ref.tenant, memoryIds)),
            ...(await deps.events.factsOf(ref.tenant, [...erased].filter(isEvent))),
          ];
          results.push({ kind: 'id', target: 'mongodb', checked: erased.size, found: remaining.length });
          // The data keys of every erased record: none may be left in the vault.
          const keysLeft = await deps.cipher.vault.idsWithKeys(ref.tenant, [...erased]);
          results.push({ kind: 'data-key', target: 'mongodb', checked: erased.size, found: keysLeft.length });
          const esById = memoryIds.length > 0 ? await deps.index.probe(ref.tenant, { ids: memoryIds }) : null;
          results.push({
            kind: 'id',
            target: 'elasticsearch',
            indices: esById?.ranOn.id ?? [],
            checked: memoryIds.length,
            found: esById?.byId.length ?? 0,
          });

          // Copies: what the tenant-wide probes below reach outside the erased set, by which probe.
          const reached = new Map<string, Set<FindingProbe>>();
          const reach = (ids: readonly string[], probe: FindingProbe) => {
            for (const id of ids) {
              if (erased.has(id)) continue;
              let by = reached.get(id);
              if (!by) reached.set(id, (by = new Set()));
              by.add(probe);
            }
          };
          const outsideOf = (ids: readonly string[]) => ids.filter((id) => !erased.has(id));

          // Every erased sentence, a window at a time: as phrases in the index (many to a query), through the
          // governed search, and in every stored content of the tenant (events are not indexed, and a memory may not
          // be yet). Hits are ids only.
          const hits = { direct: new Set<string>(), api: new Set<string>(), stored: new Set<string>() };
          const servedIds = new Set<string>();
          let searchedCount = 0;
          const probeWindow = async (window: readonly string[]) => {
            const phrases: string[][] = [];
            for (let at = 0; at < window.length; at += PHRASES_PER_QUERY)
              phrases.push(window.slice(at, at + PHRASES_PER_QUERY));
            const direct = await mapBounded(phrases, PROBE_CONCURRENCY, async (texts) => {
              const probed = await deps.index.probe(ref.tenant, { texts });
              probed.ranOn.text.forEach((index) => ranOn.text.add(index));
              return probed.byText;
            });
            direct.flat().forEach((id) => hits.direct.add(id));
            const repeatsAny = repeatsAnyOf(window);
            // Everything the governed search could serve a reader of every scope and sensitivity (history intent),
            // whatever the query and however it ranks: a result that repeats an erased sentence is served erased
            // content, whatever its id.
            for await (const page of deps.search.servable(ref.tenant, probeReader(ref.tenant, new Date()))) {
              for (const result of page) {
                const id = result.memory.record._id;
                servedIds.add(id);
                if (repeatsAny(result.memory.record.content)) hits.api.add(id);
              }
            }
            // And a few of the sentences searched as an agent would, so the ranked path itself is exercised too.
            const searched = window.slice(0, SEARCHED_PER_WINDOW);
            const served = await deps.search.searchMany(
              ref.tenant,
              searched.map((text) => ({ query: text.slice(0, 2048), k: 20, intent: 'history' })),
              probeReader(ref.tenant, new Date()),
              { traced: false },
            );
            served.forEach((results, i) =>
              results
                .filter((r) => repeats(r.memory.record.content, searched[i]!))
                .forEach((r) => hits.api.add(r.memory.record._id)),
            );
            searchedCount += searched.length;
            for (const collection of [Collections.events, Collections.memories]) {
              const stored = await deps.storage.idsWithContent(collection, ref.tenant, repeatsAny);
              stored.forEach((id) => hits.stored.add(id));
            }
          };
          // Batches may repeat a sentence (two rounds', two attempts'): each is probed once.
          const probed = new Set<string>();
          let window: string[] = [];
          for await (const batch of deps.probes.sentences(ref.tenant, ref.requestId)) {
            for (const text of batch) {
              const digest = sentenceDigest(text);
              if (probed.has(digest)) continue;
              probed.add(digest);
              window.push(text);
            }
            if (window.length >= SENTENCE_WINDOW) {
              await probeWindow(window);
              window = [];
            }
          }
          if (window.length > 0) await probeWindow(window);
          const sentences = probed.size;
          const directHits = [...hits.direct];
          const apiHits = [...hits.api];
          const storedHits = [...hits.stored];
          reach(directHits, 'text:elasticsearch');
          reach(apiHits, 'text:api');
          reach(storedHits, 'text:mongodb');
          results.push(
            {
              kind: 'text',
              target: 'mongodb',
              checked: sentences,
              sentences,
              found: storedHits.filter((id) => erased.has(id)).length,
              outside: outsideOf(storedHits).length,
            },
            {
              kind: 'text',
              target: 'elasticsearch',
              indices: [...ranOn.text],
              checked: sentences,
              sentences,
              found: directHits.filter((id) => erased.has(id)).length,
              outside: outsideOf(directHits).length,
            },
            {
              kind: 'text',
              target: 'api',
              checked: sentences,
              sentences,
              served: servedIds.size,
              searched: searchedCount,
              found: apiHits.filter((id) => erased.has(id)).length,
              outside: outsideOf(apiHits).length,
            },
          );

          // The erased contents' hashes, looked up across the whole tenant in MongoDB and in the index.
          const hashes = probes?.contentHashes ?? [];
          // Many hashes (a large erasure) are checked by one bounded pass over the tenant rather than a query each.
          const [eventOwners, memoryOwners, indexOwners] = await Promise.all([
            deps.events.idsByContentHashes(ref.tenant, hashes),
            deps.memories.idsByContentHashes(ref.tenant, hashes),
            hashes.length > 0
              ? deps.index.probe(ref.tenant, { contentHashes: hashes }).then((r) => r.byContentHash)
              : Promise.resolve([]),
          ]);
          const mongoOwners = [...eventOwners, ...memoryOwners];
          reach(mongoOwners, 'content-hash:mongodb');
          reach(indexOwners, 'content-hash:elasticsearch');
          results.push(
            {
              kind: 'content-hash',
              target: 'mongodb',
              checked: hashes.length,
              found: mongoOwners.filter((id) => erased.has(id)).length,
              outside: outsideOf(mongoOwners).length,
            },
            {
              kind: 'content-hash',
              target: 'elasticsearch',
              checked: hashes.length,
              found: indexOwners.filter((id) => erased.has(id)).length,
              outside: outsideOf(indexOwners).length,
            },
          );

          // A sample of the sentences, embedded: a record outside the closure this close to one is a copy too (the
          // same text re-embedded, or all but re-worded). The certificate says what fraction of the sentences it is.
          const vectors = probes?.vectors ?? [];
          const byVector = await mapBounded(vectors, PROBE_CONCURRENCY, async (vector) => {
            const probed = await deps.index.probe(ref.tenant, { vector });
            probed.ranOn.vector.forEach((index) => ranOn.vector.add(index));
            return probed.byVector;
          });
          const vectorHits = [...new Set(byVector.flat())];
          reach(vectorHits, 'vector:elasticsearch');
          results.push({
            kind: 'vector',
            target: 'elasticsearch',
            indices: [...ranOn.vector],
            checked: Math.min(vectors.length, sentences),
            sentences,
            found: vectorHits.filter((id) => erased.has(id)).length,
            outside: outsideOf(vectorHits).length,
          });

          // Locate again after the purge: the selector, and lineage out of everything erased or held.
          const again = await ctx.locateIds(ref.tenant, selector);
          const derived = (await deps.lineage.closure(ref.tenant, [...erased, ...held])).derived;
          const live = await ctx.describe(ref.tenant, [...new Set([...again, ...derived])]);
          const liveIds = new Set(live.filter((r) => !held.has(r.id)).map((r) => r.id));
          const relocated = liveIds.size;
          results.push({ kind: 'locate', target: 'mongodb', checked: 1, found: relocated });

          // The index looked up by the subject itself, not only by the ids this request erased. A document of a
          // live record that raced the fence is the next round's; any other is a residue.
          if ('subjectId' in selector) {
            const probed = await deps.index.probe(ref.tenant, { subjects: [selector.subjectId] });
            const bySubject = probed.bySubject;
            results.push({
              kind: 'subject',
              target: 'elasticsearch',
              indices: probed.ranOn.subject,
              checked: 1,
              found: bySubject.filter((id) => !held.has(id) && !liveIds.has(id)).length,
            });
          }

          // Read-only: the expunge step merged; this only reads what the segments say now.
          const stats = await deps.index.segmentStats(ref.tenant);
          const found = results.filter((p) => p.kind !== 'locate').reduce((n, p) => n + p.found, 0);
          // A copy is a record outside everything this request erases, keeps under a hold, or erases next round.
          for (const id of [...reached.keys()]) if (held.has(id) || liveIds.has(id)) reached.delete(id);
          const req = await ctx.request(ref);
          const merged = mergeFindings(req.findings ?? [], reached, (id) => (isEvent(id) ? 'event' : 'memory'));
          // Expiry and correction erase records by id on a schedule: the events they came from have retention of
          // their own, so copies there are stated in the certificate rather than put to a DPO.
          const findings = STATED_WITHOUT_DPO.has(req.legalGround) ? decideFindings(merged, 'certify') : merged;
          const open = openFindings(findings).length;
          await deps.requests.update(ref.tenant, ref.requestId, {
            probeResults: results,
            segmentsDeletedDocs: stats.deletedDocs,
            findings,
            segmentsByIndex: stats.indices,
          });
          verdict = {
            ok: found === 0 && relocated === 0 && stats.deletedDocs === 0 && open === 0,
            found,
            relocated,
            deletedDocs: stats.deletedDocs,
            findings: open,
          };
          // The probes hold erased content: destroy them once they have proven the erasure, then rewrite their
          // collection. Otherwise they stay for the next round or the operator's retry.
          if (verdict.ok) {
            await deps.probes.destroy(ref.tenant, ref.requestId);
            const { proof } = await deps.storage.compactProved([Collections.erasureProbes]);
            await deps.requests.update(ref.tenant, ref.requestId, { probeCompactionProof: proof });
          }
          return { found, relocated, deletedDocs: stats.deletedDocs, probes: results.length, findings: open };
        }),
      );
      return verdict;
    },
  };
}
