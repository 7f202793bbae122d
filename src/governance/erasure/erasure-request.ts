import { z } from 'zod';
import type { ProbeResult } from '../certificates/certificate.js';
import type { ExposureStatement } from '../../shared/api-contract/erasure.js';
import type { CopyFinding } from './copy-findings.js';
import type { CompactionProof } from '../../substrate/postgres/proved-compaction.js';

/** GDPR Art. 17(1)(a)–(f), retention expiry, and correction. */
export const LEGAL_GROUNDS = [
  'art17-1a',
  'art17-1b',
  'art17-1c',
  'art17-1d',
  'art17-1e',
  'art17-1f',
  'retention-expiry',
  'correction',
] as const;
export type LegalGround = (typeof LEGAL_GROUNDS)[number];

const instant = z.iso.datetime({ offset: true });
const range = z
  .strictObject({ from: instant, to: instant })
  .refine((r) => Date.parse(r.from) < Date.parse(r.to), { message: 'from must be before to', path: ['to'] });

/** What to erase: exactly one way of naming the records. */
export const SelectorSchema = z.union([
  z.strictObject({ subjectId: z.string().min(1).max(256) }),
  z.strictObject({ memoryIds: z.array(z.string().min(1).max(256)).min(1).max(10_000) }),
  z.strictObject({ validTime: range }),
  z.strictObject({ transactionTime: range }),
  z.strictObject({ contentFingerprint: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 hex digest of the content') }),
]);
export type Selector = z.output<typeof SelectorSchema>;

export const ErasureFilingSchema = z.strictObject({
  selector: SelectorSchema,
  legalGround: z.enum(LEGAL_GROUNDS),
  /** Optional client key: filing again with the same key (or the same selector and ground) returns the same request. */
  requestKey: z.string().min(1).max(128).optional(),
});
export type ErasureFiling = z.output<typeof ErasureFilingSchema>;

export function selectorKind(selector: Selector): string {
  return Object.keys(selector)[0]!;
}

/** `needs-dpo`: the probes found copies of erased content outside the closure, and the DPO decides what to do. */
export const ERASURE_STATES = [
  'received',
  'running',
  'partial',
  'needs-operator',
  'needs-dpo',
  'completed',
  'rejected',
] as const;
export type ErasureState = (typeof ERASURE_STATES)[number];

export const ERASURE_STEPS = [
  'locate',
  'closure',
  'authorise',
  'tombstone',
  'purge',
  'expunge',
  'verify',
  'certify',
] as const;
export type ErasureStep = (typeof ERASURE_STEPS)[number];

export interface StepStatus {
  step: ErasureStep;
  state: 'running' | 'done' | 'failed';
  startedAt: Date;
  finishedAt: Date | null;
  counts: Record<string, number>;
}

/** A concrete index an erasure step reached, why it holds the tenant's documents, and what was deleted there. */
export interface IndexReach {
  index: string;
  role: string;
  deleted: number;
}

/**
 * The stored request: the selector's kind and keyed hash only. The clear selector the steps need is kept apart
 * (`erasure_selectors`), written once and deleted when the request finishes, so that no rewrite of the request at
 * a step leaves a copy of it in an old row version. `selector` is read from requests filed before that split.
 */
export interface ErasureRequest {
  _id: string;
  tenant: string;
  /** On filing, the selector to keep apart; on a request stored before the split, its clear selector (or null). */
  selector?: Selector | null;
  selectorKind: string;
  selectorHash: string;
  legalGround: LegalGround;
  requester: string;
  requesterRoles: string[];
  receivedAt: Date;
  dueAt: Date;
  extensionMonths: number;
  /** Keyed hash (HMAC) of the DPO's reason for the extension: the words are not kept. */
  extensionReasonHash: string | null;
  state: ErasureState;
  steps: StepStatus[];
  progress: { purged: number; total: number };
  counts: Record<string, number>;
  holdIds: string[];
  certificateIds: string[];
  operatorNote: string | null;
  updatedAt: Date;
  policyDecision?: { policyId: string; policyVersion: number; outcome: string; ruleId: string };
  probeResults?: ProbeResult[];
  /** What each round's purge removed, per store, keyed by round number (a certificate sums them). */
  purgeRounds?: Record<string, Record<string, number>>;
  /** Index documents each round's marking step deleted, keyed by round number (its purge counts them). */
  indexDeletedAtMark?: Record<string, number>;
  /**
   * Data keys each round's purge found to destroy, keyed by round number then by the range of the erase set one
   * destroy covered (`<from>_<to>`: the rest of the set from where an attempt began, or one chunk of a purge before
   * keys were destroyed for the whole rest at once; `orphans` for the index orphans), written before they are
   * destroyed: a retried purge counts them from here.
   */
  keysAtPurge?: Record<string, Record<string, number>>;
  /** The concrete Elasticsearch index the purge and the probes went to. */
  indexName?: string | null;
  /**
   * Every concrete index each round's marking and purge reached (live, a re-embedding's copy, an orphan), with the
   * documents deleted there, keyed by round number.
   */
  indexReach?: Record<string, { mark?: IndexReach[]; purge?: IndexReach[] }>;
  /** Every concrete index an expunge merged. */
  indicesExpunged?: string[];
  segmentsDeletedDocs?: number;
  /** Deleted documents `_segments` reported per concrete index at the last verification. */
  segmentsByIndex?: { index: string; role: string; deletedDocs: number }[];
  compacted?: string[];
  /** Whether the records' compaction was shown to drop them: no older snapshot open, or which one was. */
  compactionProof?: CompactionProof;
  /** The same for the probe samples' collection, compacted once verification passed. */
  probeCompactionProof?: CompactionProof;
  /**
   * When the purge last destroyed data keys, and the KEK epoch current then: the erased content's copies in the
   * database's log and backups die with that epoch (see `lethe keys rotate`).
   */
  shredding?: ShreddingRecord;
  /** Copies of erased content the probes found outside the closure, and what the DPO decided about each. */
  findings?: CopyFinding[];
  /** What the last certificate stated about the erased records' exposure to agents (counts and times). */
  exposure?: ExposureStatement;
}

/** The crypto-shredding of a purge: ids and numbers only. */
export interface ShreddingRecord {
  at: Date;
  /** The KEK service (`local-file`, …). */
  kek: string;
  epoch: number;
  /**
   * Every epoch not destroyed at the purge (the current one among them): the log's and backups' copies of the
   * destroyed keys are wrapped under these. Absent on requests purged before it was recorded (then `epoch` alone).
   */
  liveEpochs?: number[];
  /** The longest a destroyed key can still open content in any process, in ms. */
  boundMs: number;
  /**
   * The scheduled KEK rotation's interval at the purge: the copies' lapse is dated from it. Absent when rotation was
   * left to an operator (and on requests purged before it was recorded).
   */
  rotationEveryMs?: number;
}

/**
 * How long one scheduled rotation may run (its workflow's run timeout), re-wrapping every live key: the lapse date
 * allows for it after the interval.
 */
export const ROTATION_RUN_ALLOWANCE_MS = 6 * 3_600_000;

/**
 * By when the scheduled rotation destroys every epoch live at the purge, and with them the last way to open the log's
 * and backups' copies: the purge, one interval, one run. Null when rotation was left to an operator.
 */
export function copiesLapseDue(shredding: Pick<ShreddingRecord, 'at' | 'rotationEveryMs'>): Date | null {
  if (!shredding.rotationEveryMs) return null;
  return new Date(new Date(shredding.at).getTime() + shredding.rotationEveryMs + ROTATION_RUN_ALLOWANCE_MS);
}

/** The epochs whose destruction the copies' lapse waits for: every one live at the purge (older requests: its own). */
export function lapseEpochs(shredding: Pick<ShreddingRecord, 'epoch' | 'liveEpochs'>): number[] {
  const live = shredding.liveEpochs ?? [];
  return [...new Set([...live, shredding.epoch])].sort((a, b) => a - b);
}
