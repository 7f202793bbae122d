import { copiesLapseDue, lapseEpochs, type ShreddingRecord } from '../../src/governance/erasure/erasure-request.js';
import type { AssuranceClaim, AssuranceLapse, CertificateFinding, CertificateInput, ProbeResult, StoreResult } from '../../src/governance/certificates/certificate.js';
import type { ExposureStatement } from '../../src/shared/api-contract/erasure.js';
import type { ExposureSummary } from '../../src/governance/erasure/side-records.js';
import { Collections, mapBounded } from '../../src/substrate/mongo/collections.js';
import type { StorageBackend } from '../../src/substrate/mongo/compaction.js';
import type { CompactionProof } from '../../src/substrate/postgres/proved-compaction.js';
import { beating, isEvent, type ErasureActivityDeps, type ErasureContext, type ErasureRef } from './erasure-context.js';
import { COMPACTED, forgetSelector, REQUEST_RECORDS, sentenceDigest } from './purge.activities.js';
import { checkedOn, otherIndices } from './index-reach.js';
import { probeReader } from '../../src/governance/read/reader.js';
import {
  decideFindings,
  mergeFindings,
  openFindings,
  repeats,
  repeatsAnyOf,
  type CopyFinding,
  type FindingProbe,
} from '../../src/governance/erasure/copy-findings.js';

/** Legal grounds whose erasures are filed by the engine itself, with no DPO to decide on copies. */
const STATED_WITHOUT_DPO: ReadonlySet<string> = new Set(['retention-expiry', 'correction']);

/** Text and vector probes in flight: each is a few Elasticsearch round trips, mostly waiting. */
const PROBE_CONCURRENCY = 4;
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
  const storageBackend = () => deps.storage.backend();

  return {
    /**
     * Step 6a: look for what was erased by id, text, vector, content hash and subject, directly and through the
     * governed search path; read `_segments` as it is; and run the selector and lineage again. Probes are
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
            const api = await mapBounded(window, PROBE_CONCURRENCY, async (text) => {
              // The governed search an agent uses, as a reader of every scope and sensitivity: a result that repeats
              // the erased sentence is served erased content, whatever its id.
              const served = await deps.search.search(
                ref.tenant,
                { query: text.slice(0, 2048), k: 20, intent: 'history' },
                probeReader(ref.tenant, new Date()),
                { traced: false },
              );
              return served.filter((r) => repeats(r.memory.record.content, text)).map((r) => r.memory.record._id);
            });
            api.flat().forEach((id) => hits.api.add(id));
            const repeatsAny = repeatsAnyOf(window);
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

    /** Step 6b: the signed, chained certificate, anchored in the audit chain; it states only what was checked. */
    async issueCertificate(ref: ErasureRef & { status: 'complete' | 'partial' }): Promise<{ certificateId: string }> {
      const selectors = ref.status === 'complete' ? await beating(() => forgetSelector(deps, ref)) : 0;
      const req = await ctx.request(ref);
      const purged = (await deps.sets.get(ref.tenant, ref.requestId, 'purged')).ids;
      const held = await deps.sets.get(ref.tenant, ref.requestId, 'held');
      const located = new Set((await deps.sets.get(ref.tenant, ref.requestId, 'located')).ids);
      const ids = [...new Set([...purged, ...held.ids])];
      const locatedCount = ids.filter((id) => located.has(id)).length;
      const rounds = Object.values(req.purgeRounds ?? {});
      const sum = (key: string) => rounds.reduce((n, r) => n + (r[key] ?? 0), 0);
      const compacted = new Set(req.compacted ?? []);
      const indexName = req.indexName ?? (await deps.index.indexOf(ref.tenant)) ?? `none:${ref.tenant}`;
      const backend = await storageBackend();
      const mongo = (collection: string, deleted: number): StoreResult => ({
        store: 'mongodb',
        collection,
        action: backend === 'postgresql' ? 'deleteOne+compact(force: VACUUM FULL)' : 'deleteOne+compact(force)',
        deleted,
        compacted: compacted.has(collection),
      });
      const stores: StoreResult[] = [
        mongo(Collections.memories, sum('memories')),
        mongo(Collections.events, sum('events')),
        mongo(Collections.lineage, sum('lineage')),
        {
          store: 'mongodb',
          collection: Collections.dataKeys,
          action: 'destroy data keys (crypto-shred)+compact(force)',
          deleted: sum('keys'),
          compacted: compacted.has(Collections.dataKeys),
        },
        mongo(Collections.staging, sum(`side:${Collections.staging}`)),
        mongo(Collections.reviews, sum(`side:${Collections.reviews}`)),
        mongo(Collections.disputeReasons, sum(`side:${Collections.disputeReasons}`)),
        ...REQUEST_RECORDS.map((c) => mongo(c, c === Collections.erasureSelectors ? selectors : 0)),
        {
          store: 'mongodb',
          collection: Collections.exposures,
          action: 're-key(keyed hash)+compact(force)',
          deleted: sum(`side:${Collections.exposures}`),
          compacted: compacted.has(Collections.exposures),
        },
        {
          store: 'elasticsearch',
          index: indexName,
          action: 'bulk delete+forcemerge(only_expunge_deletes)+flush',
          deleted: sum('indexDocs'),
          deletedDocsAfter: req.segmentsDeletedDocs ?? 0,
        },
        ...otherIndices(req, indexName),
      ];
      const holdIds = [...new Set(Object.values(held.holdOf))];
      const probes = req.probeResults ?? [];
      const input: CertificateInput = {
        requestId: ref.requestId,
        tenant: ref.tenant,
        selectorHash: req.selectorHash,
        requester: req.requester,
        legalGround: req.legalGround,
        policy: req.policyDecision ?? {
          policyId: deps.erasurePolicy.id,
          policyVersion: deps.erasurePolicy.version,
          outcome: 'allow',
          ruleId: 'unknown',
        },
        holds: holdIds.map((holdId) => {
          const exempted = held.ids.filter((id) => held.holdOf[id] === holdId);
          return { holdId, exemptedCount: exempted.length, exemptedIds: exempted };
        }),
        status: ref.status,
        closure: {
          located: locatedCount,
          derived: ids.length - locatedCount,
          collateral: req.counts.collateral ?? 0,
          total: ids.length,
          ids,
        },
        stores,
        probes,
        steps: req.steps
          .filter((s) => s.finishedAt)
          .map((s) => ({
            step: s.step,
            startedAt: s.startedAt.toISOString(),
            finishedAt: s.finishedAt!.toISOString(),
            counts: s.counts,
          })),
        assurance: assuranceClaims({
          backend,
          statedFindings: (req.findings ?? []).filter((f) => f.resolution === 'stated').length,
          indexName,
          otherIndices: otherIndices(req, indexName).map((s) => s.index),
          probes,
          compacted: COMPACTED.filter((c) => compacted.has(c)),
          ...(req.shredding ? { shredding: req.shredding } : {}),
          // Records the purges found no data key for (written before sealing): their copies are in clear.
          sealing: { records: sum('records') + sum('indexOrphans'), keys: sum('keys') },
          ...(req.compactionProof ? { compactionProof: req.compactionProof } : {}),
          ...(req.probeCompactionProof ? { probeCompactionProof: req.probeCompactionProof } : {}),
        }),
        exposure: exposureStatement(await deps.sideRecords.exposureOf(ref.tenant, ids)),
        ...certifiedFindings(req.findings, new Set(ids)),
      };
      const certificate = await deps.certificates.issue(input);
      await deps.requests.addCertificate(ref.tenant, ref.requestId, certificate.certificateId);
      if (input.exposure) await deps.requests.update(ref.tenant, ref.requestId, { exposure: input.exposure });
      return { certificateId: certificate.certificateId };
    },
  };
}

/**
 * The decided findings, as the certificate names them: copies the request went on to erase (in the closure) and
 * copies certified as left. An extended copy that vanished before this request reached it is not claimed.
 */
function certifiedFindings(
  findings: readonly CopyFinding[] | undefined,
  closure: ReadonlySet<string>,
): { findings?: CertificateFinding[] } {
  const decided = (findings ?? []).flatMap((f): CertificateFinding[] =>
    f.resolution === 'stated' || (f.resolution === 'extended' && closure.has(f.id))
      ? [{ id: f.id, kind: f.kind, probes: [...f.probes], resolution: f.resolution }]
      : [],
  );
  return decided.length > 0 ? { findings: decided } : {};
}

/** The certificate's exposure statement: counts always, times only where there was something to time. */
function exposureStatement(e: ExposureSummary): ExposureStatement {
  return {
    retrievals: e.retrievals,
    ...(e.retrievals > 0 ? { byRoute: e.byRoute } : {}),
    prompts: e.prompts,
    ...(e.firstRetrievedAt ? { firstRetrievedAt: e.firstRetrievedAt.toISOString() } : {}),
    ...(e.lastRetrievedAt ? { lastRetrievedAt: e.lastRetrievedAt.toISOString() } : {}),
    ...(e.firstExposedAt ? { firstExposedAt: e.firstExposedAt.toISOString() } : {}),
    ...(e.lastExposedAt ? { lastExposedAt: e.lastExposedAt.toISOString() } : {}),
  };
}

function checked(probes: readonly ProbeResult[], kind: ProbeResult['kind'], target: ProbeResult['target']): number {
  return probes.filter((p) => p.kind === kind && p.target === target).reduce((n, p) => n + p.checked, 0);
}

/**
 * What `VACUUM FULL` can be said to have dropped: L2 only when no snapshot older than the compaction was open to keep
 * a deleted row's version; otherwise L3 until a later compaction, naming why.
 */
function horizonOf(proof: CompactionProof | undefined): { said: string; lapses?: AssuranceLapse } {
  if (proof?.checked && !proof.heldBy)
    return { said: 'no snapshot older than the compaction being open to keep a deleted row (checked)' };
  if (proof?.heldBy)
    return {
      said: `but a ${proof.heldBy.kind} open since ${proof.heldBy.since ?? 'before it'} could still see deleted rows, whose versions it kept`,
      lapses: { condition: `that ${proof.heldBy.kind} ends and a later compaction of these tables runs` },
    };
  return {
    said: 'without a check that no older snapshot kept deleted rows (LETHE_POSTGRES_URL unset)',
    lapses: { condition: 'a later compaction runs with no older snapshot open' },
  };
}

/** What each place holds after the erasure, at the level the checks that ran can support. */
export function assuranceClaims(facts: {
  backend: StorageBackend;
  indexName: string;
  /** Indices the erasure reached besides the live one (a re-embedding's copy, an orphan). */
  otherIndices?: readonly string[];
  probes: readonly ProbeResult[];
  compacted: readonly string[];
  /** Copies outside the closure the DPO certified as left (named in the certificate's findings). */
  statedFindings?: number;
  /** The purge's crypto-shredding, when it destroyed data keys. */
  shredding?: ShreddingRecord;
  /** How many records the purges erased, and how many data keys they found to destroy. */
  sealing?: { records: number; keys: number };
  /** Whether the compaction was shown to drop the deleted rows (PostgreSQL); absent: not checked. */
  compactionProof?: CompactionProof;
  /** The same for the probe samples' collection, compacted after verification. */
  probeCompactionProof?: CompactionProof;
}): AssuranceClaim[] {
  const { probes } = facts;
  const keysCompacted = facts.compacted.includes(Collections.dataKeys);
  // The destroyed keys' table has a claim of its own (below): the records' place names the record collections.
  const collections = facts.compacted.filter((c) => c !== Collections.dataKeys).join(',') || 'none';
  const stated = facts.statedFindings ?? 0;
  const copies =
    stated > 0 ? `none outside the closure but the ${stated} stated findings` : 'none outside the closure either';
  const horizon = horizonOf(facts.compactionProof);
  const mongoClaim: AssuranceClaim =
    facts.backend === 'postgresql'
      ? {
          place: `postgresql:${collections}`,
          level: horizon.lapses ? 'L3' : 'L2',
          statement: `records deleted by id; VACUUM FULL (compact, force) rewrote each table, ${horizon.said}; its ANALYZE copies no document values (value statistics are off for FerretDB's tables); ${checked(probes, 'id', 'mongodb')} ids queried afterwards found none, and ${checked(probes, 'content-hash', 'mongodb')} content hashes and ${checked(probes, 'text', 'mongodb')} sentences looked for in every stored content of the tenant found ${copies}`,
          ...(horizon.lapses ? { lapses: horizon.lapses } : {}),
        }
      : {
          place: `mongodb:${collections}`,
          level: 'L3',
          statement: `records deleted by id; ${checked(probes, 'id', 'mongodb')} ids queried afterwards found none, and ${checked(probes, 'content-hash', 'mongodb')} content hashes and ${checked(probes, 'text', 'mongodb')} sentences looked for in every stored content of the tenant found ${copies}; compact(force) returns freed blocks but WiredTiger does not scrub them, so erased bytes may remain in unallocated file space`,
          lapses: {
            condition:
              'freed blocks are overwritten by later writes, or the data files are rewritten by an initial sync',
          },
        };
  // The probe samples are deleted and their collection compacted like the records: the same level on each backend.
  const probeHorizon = horizonOf(facts.probeCompactionProof);
  const probeClaim: AssuranceClaim =
    facts.backend === 'postgresql'
      ? {
          place: 'postgresql:erasure_probes',
          level: probeHorizon.lapses ? 'L3' : 'L2',
          statement: `probe samples (sealed under a data key destroyed with them) destroyed after verification; VACUUM FULL rewrote the table, ${probeHorizon.said}`,
          ...(probeHorizon.lapses ? { lapses: probeHorizon.lapses } : {}),
        }
      : {
          place: 'mongodb:erasure_probes',
          level: 'L3',
          statement:
            'probe samples destroyed after verification and the collection compacted; WiredTiger does not scrub freed blocks',
          lapses: {
            condition:
              'freed blocks are overwritten by later writes, or the data files are rewritten by an initial sync',
          },
        };
  return [
    {
      place: 'api:search',
      level: 'L1',
      statement: `${checked(probes, 'text', 'api')} erased sentences searched through the governed search path (history intent, a reader of every scope and sensitivity): no result is an erased record, and no result repeating one was found ${stated > 0 ? `outside the ${stated} stated findings` : 'under another id'}`,
    },
    ...[facts.indexName, ...(facts.otherIndices ?? [])].map((index): AssuranceClaim => ({
      place: `elasticsearch:${index}`,
      level: 'L2',
      statement: `documents deleted by id; force merge with only_expunge_deletes and flush; _segments read afterwards without a merge reports 0 deleted docs; ${checkedOn(probes, 'id', index)} id, ${checkedOn(probes, 'text', index)} text, ${checkedOn(probes, 'vector', index)} vector and ${checkedOn(probes, 'subject', index)} subject probes ran on this index and found no erased record; these text and vector probes and ${checked(probes, 'content-hash', 'elasticsearch')} content-hash probes across the tenant found ${copies}`,
    })),
    mongoClaim,
    probeClaim,
    ...(facts.shredding
      ? [
          {
            place: `${facts.backend === 'postgresql' ? 'postgresql' : 'mongodb'}:data_keys`,
            level: facts.backend === 'postgresql' && keysCompacted && !horizon.lapses ? 'L2' : 'L3',
            statement: `the erased records' data keys deleted from the vault${keysCompacted ? ` and the collection compacted${facts.backend === 'postgresql' ? `, ${horizon.said}` : ''}` : ''}; ${checked(probes, 'data-key', 'mongodb')} keys looked up afterwards found none`,
            ...(facts.backend === 'postgresql' && keysCompacted
              ? horizon.lapses
                ? { lapses: horizon.lapses }
                : {}
              : {
                  lapses: {
                    condition: 'freed blocks are overwritten by later writes, or the data files are rewritten',
                  },
                }),
          } satisfies AssuranceClaim,
        ]
      : []),
    ...copiesClaims(facts.backend, facts.shredding, facts.sealing),
    {
      place: 'temporal:history',
      level: 'L3',
      statement: 'workflow histories hold ids, keyed hashes and counts only, never content',
      lapses: { condition: 'namespace history retention period expires' },
    },
  ];
}

/** An interval as a person reads it: `24 h`, `7 d`, `90 min`. */
function duration(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  return `${Math.round(ms / 60_000)} min`;
}

/**
 * The write-ahead log and backups. Without shredding, their copies of the records survive until recycled or expired.
 * With it, the content in those copies is sealed under data keys that no longer exist in the live vault; the vault's
 * own copies of those keys (in the same log and backups) are wrapped under the KEK epoch current at the purge, so
 * the content is beyond reach once that epoch is destroyed by a rotation (`lethe keys rotate`). Fields kept in clear
 * for queries (ids, subjects, content hashes, times) stay in those copies until recycled or expired.
 */
function copiesClaims(
  backend: StorageBackend,
  shredding: ShreddingRecord | undefined,
  sealing: { records: number; keys: number } | undefined,
): AssuranceClaim[] {
  const log = backend === 'postgresql' ? 'postgresql:wal' : 'mongodb:oplog+journal';
  const recycled = {
    condition: 'WAL/oplog segments recycled after the next checkpoints (bounded by max_wal_size / oplog window)',
  };
  const reapply =
    '`lethe restore reapply-erasures` replays this certificate before a restored copy serves traffic: tombstones ' +
    'rewritten; records, lineage, index documents, staged batches, review and dispute reasons, exposures, probes ' +
    'and facts erased again; for a complete request, selector cleared, fences lowered and the holds of its partial ' +
    'certificates released. Drilled with backups from before the erasure, after its closure and after its marking';
  // Without a key destroyed there is no shredding to speak of, whatever was recorded.
  if (!shredding || (sealing !== undefined && sealing.keys === 0)) {
    return [
      {
        place: log,
        level: 'L3',
        statement: 'write-ahead records of the deleted documents remain until recycled',
        lapses: recycled,
      },
      {
        place: 'backups and elasticsearch:snapshots',
        level: 'L3',
        statement: `copies taken before or during the erasure keep its records. ${reapply}`,
        lapses: { condition: 'backup and snapshot retention period expires (runbooks/restore-backup.md)' },
      },
    ];
  }
  // Every epoch live at the purge: a copy of a key in the log or a backup may be wrapped under any of them.
  const epochs = lapseEpochs(shredding);
  const named = epochs.length === 1 ? `KEK epoch ${epochs[0]}` : `KEK epochs ${epochs.join(', ')}`;
  const sealed =
    `content sealed under per-record data keys (AES-256-GCM), destroyed at ${shredding.at.toISOString()} and ` +
    `forgotten by every process within ${shredding.boundMs} ms; the keys' own copies are wrapped under ${named} ` +
    `(${shredding.kek})`;
  // A KMS disables a destroyed key at once but keeps its material for a waiting period: the condition says so.
  const kmsWindow =
    shredding.kek === 'aws-kms'
      ? ' (the KMS disables the key at once and deletes its material after its 7–30-day waiting period, which only a KMS administrator can cancel)'
      : '';
  // With the rotation on its schedule the lapse has a date: the first rotation after the purge destroys every epoch
  // live at it, and the tenant's audit chain records when it did (`kek.epoch-destroyed`, one entry per epoch).
  const due = copiesLapseDue(shredding);
  const epochGone: AssuranceLapse = due
    ? { at: due.toISOString() }
    : {
        condition: `${named} ${epochs.length === 1 ? 'is destroyed by a rotation' : 'are all destroyed by rotations'} (lethe keys rotate)${kmsWindow}; ids, subjects, content hashes and times kept in clear remain until the copy is recycled or expires`,
      };
  // The date itself is the claim's `lapses.at`; the KMS's waiting period is on the DPO's page (epochMaterialDeletedBy).
  const dated = due
    ? `; the rotation scheduled every ${duration(shredding.rotationEveryMs!)} destroys ${epochs.length === 1 ? 'it' : 'them'} by the lapse date (audit chain: kek.epoch-destroyed); clear fields stay until the copy expires`
    : '';
  // Records written before sealing had no key to destroy: the sealed claims below do not cover them.
  const unsealed = sealing ? Math.max(0, sealing.records - sealing.keys) : 0;
  const inClear: AssuranceClaim[] =
    unsealed === 0
      ? []
      : [
          {
            place: `${log}:unsealed`,
            level: 'L3',
            statement: `${unsealed} of the ${sealing!.records} erased records were written before sealing and had no data key: write-ahead records of their rows remain in clear until recycled`,
            lapses: recycled,
          },
          {
            place: 'backups:unsealed',
            level: 'L3',
            statement: `copies taken before the erasure keep the rows of those ${unsealed} records in clear; lethe restore reapply-erasures erases them again before a restored copy serves (runbooks/restore-backup.md)`,
            lapses: { condition: 'backup and snapshot retention period expires (runbooks/restore-backup.md)' },
          },
        ];
  // The local keyring is a file on the database's host: one snapshot of that filesystem can hold both the copies and
  // the epochs that open them.
  const keyring: AssuranceClaim[] =
    shredding.kek === 'local-file'
      ? [
          {
            place: 'keyring:local-file',
            level: 'L3',
            statement: `the KEKs are a file on this host, not a KMS: a filesystem snapshot or backup holding that file beside the database's data keeps ${named} alive in its copy of the file, and so opens its copies of the erased content, whatever later rotations destroy in the live file; keep the file on another volume, out of the database's backups (docs/deploy.md)`,
            lapses: { condition: 'every snapshot or backup holding both the keyring file and the database expires' },
          },
        ]
      : [];
  return [
    ...keyring,
    {
      place: log,
      level: 'L3',
      statement: `write-ahead records of the deleted documents remain until recycled: ${sealed}${unsealed > 0 ? ` (the ${sealing!.keys} records that had a key)` : ''}${dated}`,
      lapses: epochGone,
    },
    ...inClear,
    {
      place: 'backups',
      level: 'L3',
      statement: `backups from before the erasure keep its rows: ${sealed}${dated}. A restore replays it first (lethe restore reapply-erasures, runbooks/restore-backup.md)`,
      lapses: epochGone,
    },
    {
      place: 'elasticsearch:snapshots',
      level: 'L3',
      statement:
        'index snapshots hold plaintext terms and vectors of the documents they copied: nothing is sealed there (exclude content indices from snapshots or expire them with the KEK epochs: docs/deploy.md)',
      lapses: { condition: 'snapshot retention period expires (runbooks/restore-backup.md)' },
    },
  ];
}
