import type { Collection, Db } from 'mongodb';
import { Collections, findOwn, insertOnce, isDuplicateKey } from '../../substrate/mongo/collections.js';
import {
  ERASURE_STATES,
  type ErasureRequest,
  type ErasureState,
  type ErasureStep,
  type Selector,
  type StepStatus,
} from './erasure-request.js';
import { keysetPage, type Page, type PageKey } from '../../substrate/mongo/keyset-page.js';
import type { ErasureBacklog } from '../../observability/metrics.port.js';
import { isErasureFinished } from '../../shared/erasure-finished.js';

/** States a request has not left for good: what an operator's backlog counts (finished ones only grow). */
const OPEN: readonly ErasureState[] = ERASURE_STATES.filter((s) => !isErasureFinished(s));

interface SelectorDoc {
  _id: string;
  tenant: string;
  selector: Selector;
}

/** Erasure requests and their step-by-step progress (what `GET …/erasure-requests/{id}` shows). */
export interface ErasureRequestStore {
  ensureIndexes(): Promise<void>;
  /**
   * Idempotent by id: filing the same request again returns the stored one. The request's `selector` is stored
   * apart from it (see `selectorOf`); the request itself keeps its kind and keyed hash.
   */
  create(request: ErasureRequest): Promise<{ request: ErasureRequest; created: boolean }>;
  get(tenant: string, id: string): Promise<ErasureRequest | null>;
  /** The clear selector of a request that has not finished, or null once it was dropped. */
  selectorOf(tenant: string, id: string): Promise<Selector | null>;
  setState(tenant: string, id: string, state: ErasureState, note?: string | null): Promise<void>;
  stepStarted(tenant: string, id: string, step: ErasureStep): Promise<void>;
  stepFinished(tenant: string, id: string, step: ErasureStep, counts: Record<string, number>): Promise<void>;
  setProgress(tenant: string, id: string, purged: number, total: number): Promise<void>;
  update(tenant: string, id: string, patch: Partial<ErasureRequest>): Promise<void>;
  addCertificate(tenant: string, id: string, certificateId: string): Promise<void>;
  /**
   * Forgets the selector's clear values, keeping its kind and keyed hash: for a request that has finished or will
   * not run on (rejected, or its workflow failed). Idempotent. Its old row is gone only once `erasure_selectors` is
   * compacted.
   */
  dropSelector(tenant: string, id: string): Promise<void>;
  /** Requests of a tenant in a state (e.g. those waiting on a hold). */
  idsInState(tenant: string, state: ErasureState): Promise<string[]>;
  /** A tenant's requests, most recently received first (the DPO's list). */
  /** The tenant's requests, most recently received first, a page at a time. */
  page(tenant: string, limit: number, after: PageKey | null): Promise<Page<ErasureRequest>>;
  /** A tenant's requests filed with this selector (by its keyed hash), oldest first: what an access package lists. */
  withSelectorHash(tenant: string, selectorHash: string): Promise<ErasureRequest[]>;
  /** Ids of a tenant's requests that a hold keeps from finishing. */
  idsHeldBy(tenant: string, holdId: string): Promise<string[]>;
  /** Open requests across all tenants: counts per state, the oldest one's receipt and the earliest due date. */
  backlog(): Promise<ErasureBacklog>;
  /** Per tenant, how many purged requests' copies waited on this KEK epoch's destruction (`lapseEpochs`). */
  awaitingEpoch(epoch: number): Promise<{ tenant: string; requests: number }[]>;
}

/** The erasure requests in MongoDB: the requests themselves, and their clear selectors kept apart. */
export class MongoErasureRequestStore implements ErasureRequestStore {
  private readonly requests: Collection<ErasureRequest>;
  private readonly selectors: Collection<SelectorDoc>;

  constructor(db: Db) {
    this.requests = db.collection<ErasureRequest>(Collections.erasures);
    this.selectors = db.collection<SelectorDoc>(Collections.erasureSelectors);
  }

  async ensureIndexes(): Promise<void> {
    await this.requests.createIndex({ tenant: 1, state: 1 });
    await this.requests.createIndex({ tenant: 1, receivedAt: -1 });
    await this.requests.createIndex({ state: 1, receivedAt: 1 });
    await this.requests.createIndex({ state: 1, dueAt: 1 });
    await this.requests.createIndex({ 'shredding.liveEpochs': 1 });
    await this.requests.createIndex({ 'shredding.epoch': 1 });
  }

  async create({ selector, ...request }: ErasureRequest): ReturnType<ErasureRequestStore['create']> {
    const { doc, created } = await insertOnce(this.requests, request);
    const stored = { request: doc, created };
    // Written once, never rewritten. An open request filed again with the same selector gets it back if a crash
    // came between the two inserts; a finished one never does.
    const open = !isErasureFinished(stored.request.state) && stored.request.selectorHash === request.selectorHash;
    if (selector && open) {
      try {
        await this.selectors.updateOne(
          { _id: request._id },
          { $setOnInsert: { tenant: request.tenant, selector } },
          { upsert: true },
        );
      } catch (error) {
        // Identical filings at once: both upserts try the insert, one wins, and the selector is stored.
        if (!isDuplicateKey(error)) throw error;
      }
    }
    return stored;
  }

  get(tenant: string, id: string): Promise<ErasureRequest | null> {
    return findOwn(this.requests, tenant, id);
  }
  async selectorOf(tenant: string, id: string): Promise<Selector | null> {
    const kept = await findOwn(this.selectors, tenant, id);
    if (kept) return kept.selector;
    // A request filed before selectors were kept apart holds its own.
    const request = await findOwn(this.requests, tenant, id, { projection: { selector: 1 } });
    return request?.selector ?? null;
  }

  async setState(tenant: string, id: string, state: ErasureState, note: string | null = null): Promise<void> {
    await this.requests.updateOne({ _id: id, tenant }, { $set: { state, operatorNote: note, updatedAt: new Date() } });
  }

  async stepStarted(tenant: string, id: string, step: ErasureStep): Promise<void> {
    // A retried step keeps its first start time.
    await this.patchStep(
      tenant,
      id,
      step,
      (s) => ({
        step,
        state: 'running',
        startedAt: s?.startedAt ?? new Date(),
        finishedAt: null,
        counts: s?.counts ?? {},
      }),
      true,
    );
  }

  async stepFinished(tenant: string, id: string, step: ErasureStep, counts: Record<string, number>): Promise<void> {
    await this.patchStep(tenant, id, step, (s) => ({
      step,
      state: 'done',
      startedAt: s?.startedAt ?? new Date(),
      finishedAt: new Date(),
      counts,
    }));
  }

  async setProgress(tenant: string, id: string, purged: number, total: number): Promise<void> {
    await this.requests.updateOne(
      { _id: id, tenant },
      { $set: { progress: { purged, total }, updatedAt: new Date() } },
    );
  }

  async update(tenant: string, id: string, patch: Partial<ErasureRequest>): Promise<void> {
    await this.requests.updateOne({ _id: id, tenant }, { $set: { ...patch, updatedAt: new Date() } });
  }

  async addCertificate(tenant: string, id: string, certificateId: string): Promise<void> {
    await this.requests.updateOne(
      { _id: id, tenant },
      { $addToSet: { certificateIds: certificateId }, $set: { updatedAt: new Date() } },
    );
  }

  async dropSelector(tenant: string, id: string): Promise<void> {
    await this.selectors.deleteOne({ _id: id, tenant });
    const request = await this.requests.findOne({ _id: id, tenant }, { projection: { selector: 1 } });
    if (request?.selector)
      await this.requests.updateOne({ _id: id, tenant }, { $set: { selector: null, updatedAt: new Date() } });
  }

  async idsInState(tenant: string, state: ErasureState): Promise<string[]> {
    const docs = await this.requests.find({ tenant, state }, { projection: { _id: 1 } }).toArray();
    return docs.map((d) => d._id);
  }

  page(tenant: string, limit: number, after: PageKey | null): Promise<Page<ErasureRequest>> {
    return keysetPage(this.requests, { tenant }, 'receivedAt', -1, limit, after);
  }

  async withSelectorHash(tenant: string, selectorHash: string): Promise<ErasureRequest[]> {
    const docs = await this.requests.find({ tenant, selectorHash }).limit(1000).toArray();
    return docs.sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime());
  }

  async idsHeldBy(tenant: string, holdId: string): Promise<string[]> {
    const docs = await this.requests.find({ tenant, holdIds: holdId }, { projection: { _id: 1, state: 1 } }).toArray();
    return docs.filter((d) => d.state === 'partial').map((d) => d._id);
  }

  async awaitingEpoch(epoch: number): Promise<{ tenant: string; requests: number }[]> {
    // Two equalities rather than an $or, which the local server answers with a scan: requests that recorded every
    // live epoch, and older ones that recorded only the current one.
    const [live, only] = await Promise.all([
      this.requests.find({ 'shredding.liveEpochs': epoch }, { projection: { tenant: 1 } }).toArray(),
      this.requests
        .find({ 'shredding.epoch': epoch, 'shredding.liveEpochs': { $exists: false } }, { projection: { tenant: 1 } })
        .toArray(),
    ]);
    const perTenant = new Map<string, number>();
    for (const { tenant } of [...live, ...only]) perTenant.set(tenant, (perTenant.get(tenant) ?? 0) + 1);
    return [...perTenant].map(([tenant, n]) => ({ tenant, requests: n }));
  }

  async backlog(): Promise<ErasureBacklog> {
    // One equality per state (the local server scans for $in), each a count and two one-row index reads.
    const perState = await Promise.all(
      OPEN.map(async (state) => {
        const [count, oldest, earliestDue] = await Promise.all([
          this.requests.countDocuments({ state }),
          this.requests.findOne({ state }, { sort: { receivedAt: 1 }, projection: { receivedAt: 1 } }),
          this.requests.findOne({ state }, { sort: { dueAt: 1 }, projection: { dueAt: 1 } }),
        ]);
        return { state, count, receivedAt: oldest?.receivedAt, dueAt: earliestDue?.dueAt };
      }),
    );
    const earliest = (dates: (Date | undefined)[]) =>
      dates.reduce<Date | null>((min, d) => (d && (!min || d < min) ? d : min), null);
    return {
      byState: Object.fromEntries(perState.map((s) => [s.state, s.count])),
      oldestOpenReceivedAt: earliest(perState.map((s) => s.receivedAt)),
      earliestOpenDueAt: earliest(perState.map((s) => s.dueAt)),
    };
  }

  private async patchStep(
    tenant: string,
    id: string,
    step: ErasureStep,
    change: (s: StepStatus | undefined) => StepStatus,
    fresh = false,
  ): Promise<void> {
    const request = await this.requests.findOne({ _id: id, tenant });
    if (!request) return;
    // One entry per run of a step: a step that runs again in a later round (a released hold, a write that raced the
    // fence, copies the DPO added) gets an entry of its own, so that the rounds' counts add up. A retry of an
    // unfinished run keeps its entry.
    const latest = request.steps.reduce<number>(
      (at, s, i) => (s.step === step && (at < 0 || byStart(request.steps[at]!, s) <= 0) ? i : at),
      -1,
    );
    const previous = latest >= 0 ? request.steps[latest] : undefined;
    // A later round begins with a new closure: only then does a finished step start a new entry (an expunge
    // attempted several times within one round stays one entry).
    const startsAnew =
      fresh &&
      previous?.state === 'done' &&
      (step === 'closure' || request.steps.some((s) => s.step === 'closure' && byStart(previous, s) < 0));
    const next = change(startsAnew ? undefined : previous);
    const steps = request.steps.filter((_, i) => startsAnew || i !== latest);
    await this.requests.updateOne(
      { _id: id, tenant },
      { $set: { steps: [...steps, next].sort(byStart), updatedAt: new Date() } },
    );
  }
}

export function createMongoErasureRequestStore(db: Db): ErasureRequestStore {
  return new MongoErasureRequestStore(db);
}

function byStart(a: StepStatus, b: StepStatus): number {
  return a.startedAt.getTime() - b.startedAt.getTime();
}
