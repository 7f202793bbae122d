import type { ContentCipher } from '../../src/substrate/crypto/content-cipher.js';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { AuditLog } from '../../src/governance/audit/audit-log.port.js';
import type { CertificateStore } from '../../src/governance/certificates/certificate-store.js';
import type { ErasureFenceStore, FenceKey } from '../../src/governance/erasure/erasure-fence-store.js';
import type { ErasureRequestStore } from '../../src/governance/erasure/erasure-request-store.js';
import type { ErasureSetStore } from '../../src/governance/erasure/erasure-set-store.js';
import type { ErasureStep, Selector } from '../../src/governance/erasure/erasure-request.js';
import type { ProbeStore } from '../../src/governance/erasure/probe-store.js';
import type { SideRecordEraser } from '../../src/governance/erasure/side-records.js';
import type { HoldStore } from '../../src/governance/holds/hold-store.js';
import type { Notifier } from '../../src/governance/notifications/notifier.js';
import type { PolicyDocument } from '../../src/governance/policy/evaluate.js';
import type { SearchService } from '../../src/retrieval/search-service.js';
import type { EventStore } from '../../src/substrate/events/event-store.js';
import type { Fingerprinter, TenantMacs } from '../../src/substrate/fingerprint.js';
import type { LineageStore } from '../../src/substrate/lineage/lineage-store.js';
import type { MemoryStore } from '../../src/substrate/memories/memory-store.js';
import type { Embedder } from '../../src/substrate/search/embedder.port.js';
import type { SearchIndex } from '../../src/substrate/search/search-index.port.js';
import type { TombstoneStore } from '../../src/substrate/tombstones/tombstone-store.js';
import { ErrorType } from '../../src/shared/errors.js';
import type { Metrics } from '../../src/observability/metrics.port.js';
import { isEvent, locateRecordIds } from '../../src/governance/erasure/locate.js';
import type { ErasureStorage } from '../../src/substrate/mongo/erasure-storage.js';

export interface ErasureActivityDeps {
  /** The database beneath the stores, as far as an erasure needs it: compaction and a scan of stored content. */
  storage: ErasureStorage;
  /** Content sealed at rest: the purge destroys the erased records' data keys before their rows. */
  cipher: ContentCipher;
  requests: ErasureRequestStore;
  sets: ErasureSetStore;
  probes: ProbeStore;
  fences: ErasureFenceStore;
  events: EventStore;
  memories: MemoryStore;
  lineage: LineageStore;
  tombstones: TombstoneStore;
  index: SearchIndex;
  search: SearchService;
  embedder: Embedder;
  holds: HoldStore;
  audit: AuditLog;
  certificates: CertificateStore;
  notifier: Notifier;
  fingerprints: Fingerprinter;
  /** The tenants' keys of content hashes: a selector's plain content digest is keyed to find the rows. */
  macs: TenantMacs;
  /** Staged batches, sign-off and dispute reasons that name the erased records or subjects. */
  sideRecords: SideRecordEraser;
  erasurePolicy: PolicyDocument;
  dpoEmail: string;
  operatorEmail: string;
  /** Records purged per heartbeat. */
  purgeChunk?: number;
  /** Where each step's duration is reported (the operator's metrics). */
  metrics?: Pick<Metrics, 'erasureStep'>;
}

/** Workflow inputs and results of these activities: ids, counts and states only. */
export interface ErasureRef {
  tenant: string;
  requestId: string;
}

export { isEvent };
/** Well inside the long profile's heartbeat timeout (30 s), also on a loaded machine. */
const HEARTBEAT_EVERY_MS = 5000;

/**
 * Heartbeats while `run` works. Closure, tombstone, compaction and verification take time in proportion to the
 * closure and run on the long profile; the heartbeat keeps a large one alive and lets a dead worker be noticed
 * within the heartbeat timeout rather than the whole start-to-close budget. These steps keep no heartbeat details.
 */
export async function beating<T>(run: () => Promise<T>): Promise<T> {
  let ctx: Context | null = null;
  try {
    ctx = Context.current();
  } catch {
    // Called outside an activity: nothing to report to.
  }
  const timer = ctx ? setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS) : null;
  try {
    return await run();
  } finally {
    if (timer) clearInterval(timer);
  }
}

/**
 * Both promises settled, then the first failure rethrown: a failed attempt must not leave the other half still
 * writing while its retry starts.
 */
export async function together<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [first, second] = await Promise.allSettled([a, b]);
  if (first.status === 'rejected') throw first.reason;
  if (second.status === 'rejected') throw second.reason;
  return [first.value, second.value];
}

/** The fence a selector raises before anything is located: its subject, its content, or its named records. */
export function selectorFence(selector: Selector): FenceKey[] {
  if ('subjectId' in selector) return [{ kind: 'subject', value: selector.subjectId }];
  if ('contentFingerprint' in selector) return [{ kind: 'content', value: selector.contentFingerprint }];
  if ('memoryIds' in selector) return selector.memoryIds.map((value) => ({ kind: 'record', value }));
  // A time range names no key a write could be checked against: the closure's record fences and the
  // re-location after the purge cover it.
  return [];
}

/** What every step shares: the request, step bookkeeping, and locating and describing records. */
export function erasureContext(deps: ErasureActivityDeps) {
  async function request(ref: ErasureRef) {
    const found = await deps.requests.get(ref.tenant, ref.requestId);
    if (!found) throw ApplicationFailure.nonRetryable(`erasure request ${ref.requestId} not found`, ErrorType.NotFound);
    return found;
  }

  async function selectorOf(ref: ErasureRef): Promise<Selector> {
    await request(ref);
    const selector = await deps.requests.selectorOf(ref.tenant, ref.requestId);
    if (!selector) throw ApplicationFailure.nonRetryable('the request has no selector left', ErrorType.Conflict);
    return selector;
  }

  async function step<T extends Record<string, number>>(
    ref: ErasureRef,
    name: ErasureStep,
    run: () => Promise<T>,
  ): Promise<T> {
    await deps.requests.stepStarted(ref.tenant, ref.requestId, name);
    // Timed in the activity, not the workflow: the workflow's clock is its history's, and must stay so.
    const started = performance.now();
    const elapsed = () => (performance.now() - started) / 1000;
    let counts: T;
    try {
      counts = await run();
    } catch (error) {
      deps.metrics?.erasureStep(name, 'failed', elapsed());
      throw error;
    }
    await deps.requests.stepFinished(ref.tenant, ref.requestId, name, counts);
    deps.metrics?.erasureStep(name, 'done', elapsed());
    return counts;
  }

  /** Every record the selector names now (`locateRecordIds`). */
  async function locateIds(tenant: string, selector: Selector): Promise<string[]> {
    return locateRecordIds(deps, tenant, selector);
  }

  /**
   * Subjects and namespace of each record that still exists (held-ness and collateral are decided on these), with
   * the rest of what the marking needs of it (`facts`): read without content, once.
   */
  async function describeWithFacts(tenant: string, ids: readonly string[]) {
    const [events, memories] = await Promise.all([
      deps.events.factsOf(tenant, ids.filter(isEvent)),
      deps.memories.factsOf(
        tenant,
        ids.filter((id) => !isEvent(id)),
      ),
    ]);
    return [
      ...events.map((e) => ({ id: e._id, subjects: e.subjects, namespace: e.namespace, event: e, memory: null })),
      ...memories.map((m) => ({ id: m._id, subjects: m.subjects, namespace: m.namespace, event: null, memory: m })),
    ];
  }

  async function describe(tenant: string, ids: readonly string[]) {
    return (await describeWithFacts(tenant, ids)).map(({ id, subjects, namespace }) => ({ id, subjects, namespace }));
  }

  return { request, selectorOf, step, locateIds, describe, describeWithFacts };
}
export type ErasureContext = ReturnType<typeof erasureContext>;
