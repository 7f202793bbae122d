import type { CertificateInput, StoreResult } from '../../src/governance/certificates/certificate.js';
import { Collections } from '../../src/substrate/mongo/collections.js';
import { beating, type ErasureActivityDeps, type ErasureContext, type ErasureRef } from './erasure-context.js';
import { COMPACTED, forgetSelector, REQUEST_RECORDS } from './purge.activities.js';
import { otherIndices } from './index-reach.js';
import { assuranceClaims, certifiedFindings, exposureStatement } from './assurance-claims.js';

/** Step 6b: the certificate of what step 6a checked. */
export function createCertifyActivities(deps: ErasureActivityDeps, ctx: ErasureContext) {
  const storageBackend = () => deps.storage.backend();
  return {
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
