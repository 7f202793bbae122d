/**
 * What the erasure routes answer, as the API sends it: the presenters are typed by these shapes, the routes declare
 * them as their responses (so `/openapi.json` documents them and Fastify serializes by them), and the DPO console and
 * the CLI read their types from here. A shape changed here changes for all four, and the type checker finds every
 * consumer. Ids, states, dates and counts only: never a selector's value or a record's content.
 */
import { z } from 'zod';

const counts = z.record(z.string(), z.number());

/** One step of an erasure, as the request's status shows it. */
export const ErasureStepViewSchema = z.strictObject({
  step: z.string(),
  state: z.enum(['running', 'done', 'failed']),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  counts,
});
export type ErasureStepView = z.infer<typeof ErasureStepViewSchema>;

/** A copy of erased content found outside the closure: its id, kind, the probes that reached it, the DPO's decision. */
export const ErasureFindingViewSchema = z.strictObject({
  id: z.string(),
  kind: z.string(),
  probes: z.array(z.string()),
  resolution: z.enum(['open', 'extended', 'stated']),
});
export type ErasureFindingView = z.infer<typeof ErasureFindingViewSchema>;

/**
 * Whether the erased memories had reached agents before they were erased: retrievals that returned any of them
 * and prompts they were reported in, with the first and last times. Counts and times only.
 */
export const ExposureStatementSchema = z.strictObject({
  retrievals: z.number(),
  /** Retrievals by route (`retrieve`, `search`, `memory`, `event`); absent on older certificates and when none. */
  byRoute: z.partialRecord(z.enum(['retrieve', 'search', 'memory', 'event']), z.number()).optional(),
  prompts: z.number(),
  firstRetrievedAt: z.string().optional(),
  lastRetrievedAt: z.string().optional(),
  firstExposedAt: z.string().optional(),
  lastExposedAt: z.string().optional(),
});
export type ExposureStatement = z.infer<typeof ExposureStatementSchema>;

const summaryFields = {
  id: z.string(),
  state: z.string(),
  selectorKind: z.string(),
  legalGround: z.string(),
  receivedAt: z.string(),
  dueAt: z.string(),
  extensionMonths: z.number(),
  holdIds: z.array(z.string()),
  certificateIds: z.array(z.string()),
};

/** One line of the DPO's list: the clock and where the request stands, without steps or selector. */
export const ErasureSummarySchema = z.strictObject({
  ...summaryFields,
  overdue: z.boolean(),
  /** When a finished request last changed (its closing); null while it is open. */
  closedAt: z.string().nullable(),
});
export type ErasureSummary = z.infer<typeof ErasureSummarySchema>;

/** A page of the DPO's list. */
export const ErasurePageSchema = z.strictObject({
  items: z.array(ErasureSummarySchema),
  nextCursor: z.string().nullable(),
});

/**
 * From when a purged request's content in the database's log and backups is beyond reach: the key epochs its
 * shredded keys waited on and when they were destroyed (null while any of them lives).
 */
export const ShreddingViewSchema = z.strictObject({
  at: z.string(),
  boundMs: z.number(),
  kek: z.string(),
  epoch: z.number(),
  epochs: z.array(z.number()),
  lapsedAt: z.string().nullable(),
  lapseDue: z.string().nullable(),
  epochDestroyedAt: z.string().nullable(),
  epochMaterialDeletedBy: z.string().optional(),
});

/** A request's status: its steps with timestamps and counts, its progress, and what its certificate stated. */
export const ErasureDetailSchema = z.strictObject({
  ...summaryFields,
  selectorHash: z.string(),
  requester: z.string(),
  steps: z.array(ErasureStepViewSchema),
  progress: z.strictObject({ purged: z.number(), total: z.number() }),
  counts,
  note: z.string().nullable(),
  exposure: ExposureStatementSchema.optional(),
  findings: z.array(ErasureFindingViewSchema),
  /** Present on a purged request whose keys were shredded (`GET …/erasure-requests/{id}` only). */
  shredding: ShreddingViewSchema.optional(),
});
export type ErasureDetail = z.infer<typeof ErasureDetailSchema>;
