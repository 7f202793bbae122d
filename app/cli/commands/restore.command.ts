/**
 * `lethe restore reapply-erasures --tenant T`: after restoring a MongoDB or Elasticsearch backup, and before
 * serving traffic, replays every certified erasure of the tenant against the restored stores. It works on the
 * stores directly (no API, no worker), so it runs while the service is still down.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import type { Command } from 'commander';
import type { Db } from 'mongodb';
import { loadConfig } from '../../../src/config/load-config.js';
import type { Services } from '../../services.js';
import type { DeletionCertificate } from '../../../src/governance/certificates/certificate.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { compactCollections } from '../../../src/substrate/mongo/compaction.js';
import type { TombstoneSpec } from '../../../src/substrate/tombstones/tombstone-store.js';
import { TENANT_PATTERN } from '../../../src/governance/auth/principal.js';
import {
  emptyRequestCounts,
  reapplyRequest,
  type CertifiedRequest,
  type RequestCounts,
} from '../restore/reapply-request.js';
import { CliError, ExitCode } from '../exit-codes.js';

export interface ReapplyOptions {
  /** The database the services run on (tombstones are counted and collections compacted there). */
  db: Db;
  /**
   * Certificates to replay, in chain order. Default: the tenant's certificates in MongoDB. A MongoDB backup
   * older than some erasures rolls the certificates back with it: pass the offsite export
   * (`lethe certificates export`) instead.
   */
  certificates?: AsyncIterable<DeletionCertificate> | Iterable<DeletionCertificate>;
  /**
   * Deleted documents stay in the index segments until the soft-delete retention lease advances (a periodic
   * sync, 30 s by default): force merge up to `attempts` times, `intervalMs` apart. Default 18 × 5 s.
   */
  expunge?: { attempts: number; intervalMs: number };
}

export interface ReapplyReport {
  tenant: string;
  certificates: number;
  requests: number;
  /** Distinct records the certificates say were erased (ids exempted by a hold still in force excluded). */
  erasedIds: number;
  /** Of those, records found again in MongoDB (restored from the backup) and purged again. */
  restored: { memories: number; events: number };
  purged: { memories: number; events: number; lineage: number; indexDocs: number; keys: number };
  /**
   * What the requests' erasures removed beyond the records, found again and removed again: side collections (as the
   * erasure counts them), probes, facts, completed request rows still running or holding their clear selector, their
   * fences, and holds their certificates prove released.
   */
  requestRecords: RequestCounts;
  /** Deleted documents `_segments` still reports after the expunge (0 once physical; re-run later if not). */
  segmentsDeletedDocs: number;
  tombstones: { before: number; written: number; after: number };
  compacted: string[];
  warnings: string[];
}

const isEvent = (id: string) => id.startsWith('evt_');
const CHUNK = 500;

/** The ids a certificate proves erased: its closure, less what a hold exempted at that time. */
function erasedBy(certificate: DeletionCertificate): string[] {
  const exempted = new Set(certificate.holds.flatMap((h) => h.exemptedIds));
  return certificate.closure.ids.filter((id) => !exempted.has(id));
}

/**
 * Replays every certified erasure of the tenant: each erased record that exists again in MongoDB is marked
 * deleted, re-tombstoned (its record, idempotency-key and subject-content tombstones, recomputed from the
 * restored record), purged from MongoDB and the index, and its lineage forgotten. Every erased memory id is
 * also deleted from the index (an Elasticsearch snapshot may be restored on its own), and every erased id
 * gets its record tombstone back, so nothing can be derived from it again. Then, per request, what the erasure
 * removed beyond the records and what the request kept while it ran (see `reapplyRequest`). Idempotent.
 */
export async function reapplyErasures(
  services: Services,
  tenant: string,
  options: ReapplyOptions,
): Promise<ReapplyReport> {
  const tombstoneDocs = options.db.collection(Collections.tombstones);
  const report: ReapplyReport = {
    tenant,
    certificates: 0,
    requests: 0,
    erasedIds: 0,
    restored: { memories: 0, events: 0 },
    purged: { memories: 0, events: 0, lineage: 0, indexDocs: 0, keys: 0 },
    requestRecords: emptyRequestCounts(),
    segmentsDeletedDocs: 0,
    tombstones: { before: await tombstoneDocs.countDocuments({ tenant }), written: 0, after: 0 },
    compacted: [],
    warnings: [],
  };
  const requests = new Map<string, CertifiedRequest>();
  const seen = new Set<string>();
  for await (const certificate of options.certificates ?? services.certificates.list(tenant)) {
    if (certificate.tenant !== tenant) {
      report.warnings.push(`certificate ${certificate.certificateId} belongs to another tenant: skipped`);
      continue;
    }
    report.certificates++;
    const request = certifiedRequest(requests, certificate);
    const erased = erasedBy(certificate);
    for (const id of erased) request.erased.add(id);
    const ids = erased.filter((id) => !seen.has(id));
    for (const id of ids) seen.add(id);
    for (let at = 0; at < ids.length; at += CHUNK) {
      await reapplyChunk(services, tenant, request, ids.slice(at, at + CHUNK), report);
    }
  }
  report.requests = requests.size;
  report.erasedIds = seen.size;
  // After the records: the side records are found by the records' subjects and content hashes, read just now.
  for (const request of requests.values()) await reapplyRequest(services, tenant, request, report.requestRecords);
  if (report.purged.indexDocs > 0) {
    const { attempts, intervalMs } = options.expunge ?? { attempts: 18, intervalMs: 5000 };
    for (let attempt = 1; attempt <= attempts; attempt++) {
      report.segmentsDeletedDocs = (await services.index.expungeDeleted(tenant)).deletedDocs;
      if (report.segmentsDeletedDocs === 0 || attempt === attempts) break;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
    if (report.segmentsDeletedDocs > 0) {
      report.warnings.push(
        `_segments still reports ${report.segmentsDeletedDocs} deleted documents (soft-delete retention lease): run this command again in a few minutes`,
      );
    }
  }
  const touched = touchedCollections(report);
  if (touched.length > 0) report.compacted = await compactCollections(options.db, touched);
  report.tombstones.after = await tombstoneDocs.countDocuments({ tenant });
  if (report.certificates > 0 && report.tombstones.before === 0) {
    report.warnings.push(
      `the restored MongoDB held no tombstones for tenant ${tenant} although ${report.certificates} certificates exist: ` +
        'record tombstones were rewritten from the certificates and content tombstones from the restored records; ' +
        'events erased but absent from the backup cannot get their idempotency-key tombstones back (see runbooks/restore-backup.md)',
    );
  }
  return report;
}

function certifiedRequest(requests: Map<string, CertifiedRequest>, certificate: DeletionCertificate) {
  let request = requests.get(certificate.requestId);
  if (!request) {
    request = {
      requestId: certificate.requestId,
      erased: new Set(),
      subjects: new Set(),
      contentHashes: new Set(),
      complete: null,
      holdIds: new Set(),
    };
    requests.set(certificate.requestId, request);
  }
  if (certificate.status === 'complete') request.complete = certificate;
  for (const hold of certificate.holds) request.holdIds.add(hold.holdId);
  return request;
}

/** The collections this run removed or rewrote documents in: rewritten (compacted) so the old versions go too. */
function touchedCollections(report: ReapplyReport): string[] {
  const { purged, requestRecords: r } = report;
  const changed: [string, number][] = [
    [Collections.memories, purged.memories],
    [Collections.events, purged.events],
    [Collections.lineage, purged.lineage],
    [Collections.dataKeys, purged.keys],
    ...Object.entries(r.side),
    [Collections.erasureProbes, r.probes],
    [Collections.erasureFacts, r.facts],
    [Collections.erasures, r.requests],
    [Collections.holds, r.holds],
  ];
  return changed.filter(([, n]) => n > 0).map(([collection]) => collection);
}

async function reapplyChunk(
  services: Services,
  tenant: string,
  request: CertifiedRequest,
  ids: string[],
  report: ReapplyReport,
): Promise<void> {
  const { requestId } = request;
  const memoryIds = ids.filter((id) => !isEvent(id));
  const eventIds = ids.filter(isEvent);
  // Without content: a restored row whose data key is gone (destroyed by a rotation since) is found all the same.
  const [memories, events] = await Promise.all([
    services.memories.factsOf(tenant, memoryIds),
    services.events.factsOf(tenant, eventIds),
  ]);
  report.restored.memories += memories.length;
  report.restored.events += events.length;
  // What the side records are found by, as the erasure's probes kept it: every subject and content hash erased.
  for (const record of [...memories, ...events]) {
    record.subjects.forEach((s) => request.subjects.add(s));
    request.contentHashes.add(record.contentHash);
  }
  // Tombstones and the deleted mark first, as in the erasure itself: nothing restored is served or re-derived meanwhile.
  const specs: TombstoneSpec[] = [
    ...ids.map((id): TombstoneSpec => ({ kind: 'record', parts: [id] })),
    ...events.flatMap((e): TombstoneSpec[] => [
      { kind: 'idempotency-key', parts: [e.idempotencyKey] },
      ...e.subjects.map((s): TombstoneSpec => ({ kind: 'subject-content', parts: [s, e.contentHash] })),
    ]),
    ...memories.flatMap((m) =>
      m.subjects.map((s): TombstoneSpec => ({ kind: 'subject-content', parts: [s, m.contentHash] })),
    ),
  ];
  report.tombstones.written += await services.tombstones.write(tenant, requestId, specs);
  if (memories.length > 0)
    await services.memories.markDeleted(
      tenant,
      memories.map((m) => m._id),
      requestId,
    );
  if (events.length > 0)
    await services.events.markDeleted(
      tenant,
      events.map((e) => e._id),
    );
  // The index by every erased memory id, not only the restored ones: a snapshot may have been restored alone.
  if (memoryIds.length > 0) report.purged.indexDocs += (await services.index.purge(tenant, memoryIds)).deleted;
  // The backup's copies of the data keys, by every erased id: keys before rows, as in the erasure.
  report.purged.keys += await services.cipher.shred(tenant, ids);
  report.purged.memories += await services.memories.purge(
    tenant,
    memories.map((m) => m._id),
  );
  report.purged.events += await services.events.purge(
    tenant,
    events.map((e) => e._id),
  );
  report.purged.lineage += await services.lineage.forget(tenant, ids);
}

/** Reads an export of `lethe certificates export` (one canonical certificate per line). */
async function* certificatesFromFile(file: string): AsyncIterable<DeletionCertificate> {
  let line = 0;
  for await (const text of readline.createInterface({
    input: fs.createReadStream(file, 'utf8'),
    crlfDelay: Infinity,
  })) {
    line++;
    if (text.trim() === '') continue;
    try {
      yield JSON.parse(text) as DeletionCertificate;
    } catch {
      throw new CliError(`--certificates: ${file}: line ${line} is not JSON`, ExitCode.usage);
    }
  }
}

function printReport(r: ReapplyReport): void {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  out(`tenant ${r.tenant}: ${r.certificates} certificates, ${r.requests} requests, ${r.erasedIds} erased records`);
  out(`  found again in MongoDB  memories=${r.restored.memories} events=${r.restored.events}`);
  out(
    `  purged                  memories=${r.purged.memories} events=${r.purged.events} lineage=${r.purged.lineage} index=${r.purged.indexDocs} keys=${r.purged.keys}`,
  );
  out(
    `  tombstones              before=${r.tombstones.before} written=${r.tombstones.written} after=${r.tombstones.after}`,
  );
  const q = r.requestRecords;
  const side = Object.entries(q.side)
    .map(([collection, n]) => `${collection}=${n}`)
    .join(' ');
  out(`  side records            ${side || 'none'}`);
  out(
    `  request records         probes=${q.probes} facts=${q.facts} requests=${q.requests} fences=${q.fences} holds=${q.holds}`,
  );
  if (r.compacted.length > 0) out(`  compacted               ${r.compacted.join(', ')}`);
  if (r.purged.indexDocs > 0) out(`  segments deleted docs   ${r.segmentsDeletedDocs}`);
  for (const warning of r.warnings) process.stderr.write(`lethe: warning: ${warning}\n`);
}

/** `lethe restore …`: administration after restoring a backup; talks to the stores, not to the API. */
export function registerRestoreCommands(program: Command): void {
  const restore = program
    .command('restore')
    .description('after restoring a MongoDB or Elasticsearch backup (runbooks/restore-backup.md)');
  restore
    .command('reapply-erasures')
    .description(
      'replay every certified erasure of a tenant against the restored stores, before serving traffic: records erased ' +
        'since the backup are tombstoned and purged again from MongoDB and Elasticsearch, with the staged batches, review and dispute ' +
        'reasons, exposures, probes, facts, selectors and holds their erasures removed (uses the stores directly, from the configuration)',
    )
    .option('--tenant <tenant>', 'the tenant')
    .option(
      '--certificates <file>',
      'replay these certificates (a `lethe certificates export`) instead of those in MongoDB',
    )
    .action(async (options: { tenant?: string; certificates?: string }) => {
      const globals = program.opts() as { tenant?: string; json?: boolean };
      // The program's own --tenant takes the option wherever it is written.
      const tenant = options.tenant ?? globals.tenant;
      if (!tenant) throw new CliError('--tenant: required', ExitCode.usage);
      if (!TENANT_PATTERN.test(tenant)) throw new CliError(`--tenant: invalid tenant id ${tenant}`, ExitCode.usage);
      if (options.certificates !== undefined && !fs.existsSync(options.certificates)) {
        throw new CliError(`--certificates: no such file ${options.certificates}`, ExitCode.usage);
      }
      // Loaded here, not at the top: every other command would pay for the store clients at start (≈ 0.7 s).
      const [{ createRuntime }, { createServices }] = await Promise.all([
        import('../../runtime.js'),
        import('../../services.js'),
      ]);
      const runtime = createRuntime(loadConfig(), 'lethe-restore');
      try {
        const services = createServices(runtime);
        const report = await reapplyErasures(services, tenant, {
          db: runtime.db,
          ...(options.certificates !== undefined ? { certificates: certificatesFromFile(options.certificates) } : {}),
        });
        if (globals.json) process.stdout.write(`${JSON.stringify(report)}\n`);
        else printReport(report);
      } finally {
        await runtime.close();
      }
    });
}
