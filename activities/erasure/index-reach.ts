/**
 * The Elasticsearch indices an erasure reached besides the live one (a re-embedding's copy, an orphan behind no
 * alias), as the certificate names them, and which probes ran on a given index.
 */
import type { ElasticsearchStoreResult, ProbeResult } from '../../src/governance/certificates/certificate.js';
import type { ErasureRequest } from '../../src/governance/erasure/erasure-request.js';

const ACTION = 'bulk delete+forcemerge(only_expunge_deletes)+flush';

/** One store entry per index other than `live` that a marking, a purge or an expunge of the request reached. */
export function otherIndices(req: ErasureRequest, live: string): ElasticsearchStoreResult[] {
  const deleted = new Map<string, number>();
  for (const round of Object.values(req.indexReach ?? {}))
    for (const r of [...(round.mark ?? []), ...(round.purge ?? [])])
      deleted.set(r.index, (deleted.get(r.index) ?? 0) + r.deleted);
  for (const index of req.indicesExpunged ?? []) deleted.set(index, deleted.get(index) ?? 0);
  const after = new Map((req.segmentsByIndex ?? []).map((s) => [s.index, s.deletedDocs]));
  return [...deleted.keys()]
    .filter((index) => index !== live)
    .sort()
    .map((index) => ({
      store: 'elasticsearch',
      index,
      action: ACTION,
      deleted: deleted.get(index) ?? 0,
      deletedDocsAfter: after.get(index) ?? 0,
    }));
}

/** How many probes of a kind ran on the index (a result that names no index, from before they were named, counts). */
export function checkedOn(probes: readonly ProbeResult[], kind: ProbeResult['kind'], index: string): number {
  return probes
    .filter(
      (p) => p.kind === kind && p.target === 'elasticsearch' && (p.indices === undefined || p.indices.includes(index)),
    )
    .reduce((n, p) => n + p.checked, 0);
}
