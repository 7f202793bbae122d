/**
 * The multi-tenant dataset of `bench/retrieval.bench.ts`, shaped like the admissibility study (seed 003): every
 * query has 1–3 required-evidence anchors admissible for its asker, and the topic it asks about is crowded by
 * records that are relevant but inadmissible — other principals' records (wrong scope), superseded states of the
 * same fact (inadmissible for `current` intent), records deleted before purge and records under a legal hold.
 * Pure code: deterministic for a seed.
 */
import { sha256Hex } from '../../src/shared/sha256.js';
import type { MemoryRecord } from '../../src/substrate/model/records.js';
import { principalScope } from '../../src/substrate/model/records.js';
import type { Intent } from '../../src/governance/read/admissibility.js';
import { rng } from './substrate-measure.js';

export const NAMESPACES = ['crm', 'support', 'sales', 'ops', 'product', 'marketing', 'success', 'docs'];
/** What every record carries and every reader's purpose admits: the policy axis is 1 throughout. */
export const READER_SENSITIVITIES = ['public', 'internal'] as const;
/** The purpose every record is written for and every reader asks under. */
export const READER_PURPOSE = 'customer-support';

export interface DatasetOptions {
  memories: number;
  queries: number;
  tenants: number;
  principalsPerTenant: number;
  seed: number;
  /** Shares of records deleted before purge and held (among records not deleted). */
  deletedShare: number;
  heldShare: number;
  /** Share of queries asked with `history` intent, whose anchor is a superseded state. */
  historyShare: number;
}

/** The shares `bench:retrieval` has always run with: 6 % deleted before purge, 4 % held, 20 % history queries. */
export const RETRIEVAL_SHARES = { deletedShare: 0.06, heldShare: 0.04, historyShare: 0.2 } as const;

/** How the index sees a record that MongoDB has marked deleted (the window before its purge). */
export type DeletedInIndex = 'status-deleted' | 'stale' | 'absent';

export interface BenchQuery {
  tenant: string;
  principal: string;
  intent: Intent;
  text: string;
  anchors: string[];
}

export interface TenantData {
  tenant: string;
  principals: string[];
  /** As stored in MongoDB. */
  records: MemoryRecord[];
  /** As written to the index (deleted records as the index may still have them; some are absent). */
  indexed: MemoryRecord[];
}

export interface Dataset {
  tenants: TenantData[];
  queries: BenchQuery[];
  byId: Map<string, MemoryRecord>;
  stats: Record<string, number>;
}

interface Fact {
  owner: string;
  attribute: string;
  /** Oldest first; the last is the current state. */
  states: MemoryRecord[];
}

interface Topic {
  words: string;
  facts: Fact[];
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ru', 'se', 'ta', 'vo', 'ne', 'pi', 'da', 'gu', 'fe', 'zo', 'ri', 'ba', 'xu'];

export function generateDataset(o: DatasetOptions): Dataset {
  const random = rng(o.seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const used = new Set<string>();
  // Pronounceable made-up words, unique across the dataset: each topic's words occur in that topic only.
  const freshWord = (): string => {
    for (;;) {
      const w = Array.from({ length: 3 + int(2) }, () => pick(SYLLABLES)).join('');
      if (!used.has(w)) {
        used.add(w);
        return w;
      }
    }
  };
  const attributes = Array.from({ length: 60 }, freshWord);
  const values = Array.from({ length: 2000 }, freshWord);
  const filler = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}x`);
  const fillerWord = () => filler[Math.floor(filler.length * random() ** 3)]!;
  const sentence = (n: number) => Array.from({ length: n }, fillerWord).join(' ');

  const perTenant = Math.max(1, Math.floor(o.memories / o.tenants));
  const tenants: TenantData[] = [];
  const topicsOf = new Map<string, Topic[]>();
  const byId = new Map<string, MemoryRecord>();
  const stats = { deleted: 0, deletedStatusInIndex: 0, deletedStale: 0, deletedAbsent: 0, held: 0, superseded: 0 };
  let serial = 0;
  const base = Date.UTC(2025, 0, 1);

  for (let t = 0; t < o.tenants; t++) {
    const tenant = `rtv-t${t}`;
    const principals = Array.from({ length: o.principalsPerTenant }, (_, p) => `agent-${t}-${p}`);
    const records: MemoryRecord[] = [];
    const topics: Topic[] = [];
    while (records.length < perTenant) {
      const words = `${freshWord()} ${freshWord()}`;
      const namespace = pick(NAMESPACES);
      const topic: Topic = { words, facts: [] };
      const attrs = new Set<string>();
      while (attrs.size < 4) attrs.add(pick(attributes));
      for (const attribute of attrs) {
        for (let f = 0; f < 3; f++) {
          const owner = random() < 0.25 ? 'tenant' : principalScope(pick(principals));
          const writer = owner === 'tenant' ? pick(principals) : owner.slice('principal:'.length);
          const subject = `subject-${t}-${topics.length}`;
          const length = 1 + int(3);
          const states: MemoryRecord[] = [];
          for (let s = 0; s < length && records.length < perTenant; s++) {
            const at = new Date(base + serial * 60_000);
            const content = `${words} ${attribute}: ${pick(values)} ${pick(values)}. ${sentence(8 + int(13))}`;
            const record: MemoryRecord = {
              _id: `mem_rtv_${(serial++).toString(36).padStart(7, '0')}`,
              tenant,
              namespace,
              subjects: [subject],
              kind: 'fact',
              attribute,
              content,
              contentHash: sha256Hex(content),
              validFrom: at,
              validTo: null,
              recordedAt: at,
              policy: {
                purpose: READER_PURPOSE,
                sensitivity: 'internal',
                jurisdiction: 'PT',
                retentionClass: 'standard',
              },
              provenance: {
                eventIds: [],
                parentIds: [],
                derivationRule: 'bench-retrieval',
                modelVersion: null,
                promptVersion: null,
              },
              trustTier: 1,
              confidence: 0.8,
              version: 1,
              status: 'active',
              writtenBy: writer,
              expiresAt: null,
              highImpact: false,
              statusReason: null,
              updatedAt: at,
              scope: owner,
            };
            const previous = states[states.length - 1];
            if (previous) {
              // Supersession closes the previous state's valid time and moves it on (as the review workflow does).
              previous.status = 'superseded';
              previous.validTo = at;
              previous.version = 2;
              previous.statusReason = 'superseded';
            }
            states.push(record);
            records.push(record);
          }
          if (states.length > 0) topic.facts.push({ owner, attribute, states });
        }
      }
      topics.push(topic);
    }
    const indexed: MemoryRecord[] = [];
    for (const record of records) {
      if (record.status === 'superseded') stats.superseded++;
      if (random() < o.deletedShare) {
        const before = record.status;
        record.status = 'deleted';
        record.statusReason = 'erasure:req_bench';
        record.version++;
        stats.deleted++;
        const r = random();
        const mode: DeletedInIndex = r < 0.4 ? 'status-deleted' : r < 0.8 ? 'stale' : 'absent';
        if (mode === 'status-deleted') {
          stats.deletedStatusInIndex++;
          indexed.push(record);
        } else if (mode === 'stale') {
          // Marked deleted in MongoDB; the index update has not landed yet.
          stats.deletedStale++;
          indexed.push({ ...record, status: before });
        } else stats.deletedAbsent++;
      } else {
        if (random() < o.heldShare) {
          // The index carries no hold field: only the re-read from MongoDB sees it.
          record.restrictedBy = [`hold_bench_${int(50)}`];
          stats.held++;
        }
        indexed.push(record);
      }
      byId.set(record._id, record);
    }
    tenants.push({ tenant, principals, records, indexed });
    topicsOf.set(tenant, topics);
  }

  const servable = (r: MemoryRecord) => r.status !== 'deleted' && (r.restrictedBy?.length ?? 0) === 0;
  const readable = (r: MemoryRecord, principal: string) =>
    r.scope === 'tenant' || r.scope === principalScope(principal);
  const queries: BenchQuery[] = [];
  for (let q = 0, tries = 0; q < o.queries && tries < o.queries * 100; tries++) {
    const data = tenants[q % tenants.length]!;
    const topic = pick(topicsOf.get(data.tenant)!);
    const history = random() < o.historyShare;
    const fact = pick(topic.facts);
    const askerOf = (f: Fact) => (f.owner === 'tenant' ? pick(data.principals) : f.owner.slice('principal:'.length));
    if (history) {
      const old = fact.states.filter((s) => s.status === 'superseded' && servable(s));
      if (old.length === 0) continue;
      const anchor = pick(old);
      const principal = askerOf(fact);
      const value = anchor.content.slice(topic.words.length + fact.attribute.length + 3).split('.')[0]!;
      queries.push({
        tenant: data.tenant,
        principal,
        intent: 'history',
        text: `${topic.words} ${fact.attribute} ${value}`,
        anchors: [anchor._id],
      });
      q++;
      continue;
    }
    const current = fact.states[fact.states.length - 1]!;
    if (current.status !== 'active' || !servable(current)) continue;
    const principal = askerOf(fact);
    const others = topic.facts
      .map((f) => f.states[f.states.length - 1]!)
      .filter((s) => s !== current && s.status === 'active' && servable(s) && readable(s, principal));
    const wanted = int(3);
    const anchors = [current];
    while (anchors.length <= wanted && others.length > 0) anchors.push(others.splice(int(others.length), 1)[0]!);
    const attrs = [...new Set(anchors.map((a) => a.attribute!))];
    queries.push({
      tenant: data.tenant,
      principal,
      intent: 'current',
      text: `${topic.words} ${attrs.join(' ')}`,
      anchors: anchors.map((a) => a._id),
    });
    q++;
  }
  return { tenants, queries, byId, stats };
}
