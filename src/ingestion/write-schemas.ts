import { z } from 'zod';
import { EVENT_ORIGINS, MAX_CONTENT_BYTES, MEMORY_KINDS, SENSITIVITIES } from '../substrate/model/records.js';

export { MAX_CONTENT_BYTES };
export const MAX_BATCH = 1000;

const identifier = z.string().min(1).max(256).regex(/^\S+$/, 'must not contain whitespace');
const namespace = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z0-9][a-z0-9._/-]*$/, 'lower-case letters, digits, ".", "_", "/" and "-"');
const subject = z.string().min(1).max(256);
const content = z
  .string()
  .min(1)
  .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_CONTENT_BYTES, `must be at most ${MAX_CONTENT_BYTES} bytes`);
const instant = z.iso.datetime({ offset: true });
/** Ids a memory cites, each once: admission reads and scans every cited record, so a repeat would cost it again. */
const citedIds = z
  .array(identifier)
  .max(256)
  .superRefine((ids, ctx) => {
    const seen = new Set<string>();
    ids.forEach((id, i) => {
      if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: 'named twice' });
      seen.add(id);
    });
  })
  .default([]);

export const EventInputSchema = z.strictObject({
  source: identifier,
  externalId: identifier,
  namespace,
  subjects: z.array(subject).min(1).max(32),
  content,
  occurredAt: instant,
  sensitivity: z.enum(SENSITIVITIES).default('internal'),
  trustTier: z.number().int().min(0).max(3).default(1),
  /** Whose event it is: the writer's own (default) or the tenant's shared scope. */
  scope: z.enum(['principal', 'tenant']).default('principal'),
  /** Where its content came from: the conversation (default), or external content that memories wait in quarantine for. */
  origin: z.enum(EVENT_ORIGINS).optional(),
});
export type EventInput = z.output<typeof EventInputSchema>;

export const MemoryInputSchema = z
  .strictObject({
    namespace,
    subjects: z.array(subject).min(1).max(32),
    kind: z.enum(MEMORY_KINDS),
    attribute: z.string().min(1).max(128).optional(),
    content,
    validFrom: instant,
    validTo: instant.optional(),
    purpose: z.string().min(1).max(64),
    sensitivity: z.enum(SENSITIVITIES),
    jurisdiction: z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166 alpha-2 code'),
    retentionClass: z.string().min(1).max(64).optional(),
    trustTier: z.number().int().min(0).max(3),
    confidence: z.number().min(0).max(1),
    /**
     * When the writer distilled the memory from the interaction (default: when it is admitted). The derivation
     * audit searches only history that occurred at or before it.
     */
    derivedAt: instant.optional(),
    /** Whose memory it is: the writer's own (default) or the tenant's shared scope. */
    scope: z.enum(['principal', 'tenant']).default('principal'),
    provenance: z.strictObject({
      eventIds: citedIds,
      parentIds: citedIds,
      derivationRule: z.string().min(1).max(128),
      modelVersion: z.string().max(128).optional(),
      promptVersion: z.string().max(128).optional(),
    }),
  })
  .superRefine((m, ctx) => {
    if (m.provenance.eventIds.length + m.provenance.parentIds.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['provenance', 'eventIds'],
        message: 'a memory must cite at least one event or parent',
      });
    }
    if (m.derivedAt && Date.parse(m.derivedAt) > Date.now() + 60_000) {
      ctx.addIssue({ code: 'custom', path: ['derivedAt'], message: 'must not be in the future' });
    }
    if (m.validTo && Date.parse(m.validTo) <= Date.parse(m.validFrom)) {
      ctx.addIssue({ code: 'custom', path: ['validTo'], message: 'must be after validFrom' });
    }
  });
export type MemoryInput = z.output<typeof MemoryInputSchema>;

export const WriteBatchSchema = z
  .strictObject({
    events: z.array(EventInputSchema).max(MAX_BATCH).default([]),
    memories: z.array(MemoryInputSchema).max(MAX_BATCH).default([]),
  })
  .refine((b) => b.events.length + b.memories.length > 0, {
    message: 'a batch needs at least one event or memory',
    path: ['events'],
  });
export type WriteBatch = z.output<typeof WriteBatchSchema>;

/** What set a consolidation run off: recorded in its result, never changing what it builds. */
export const CONSOLIDATION_TRIGGERS = [
  'session-end',
  'task-end',
  'conflict',
  'policy-change',
  'model-change',
  'manual',
] as const;
export type ConsolidationTrigger = (typeof CONSOLIDATION_TRIGGERS)[number];

export const ConsolidationRequestSchema = z.strictObject({
  namespace,
  /** Whose memories: the caller's own (default), or the tenant's shared ones (admins only). */
  scope: z.enum(['principal', 'tenant']).default('principal'),
  trigger: z.enum(CONSOLIDATION_TRIGGERS),
});
export type ConsolidationRequest = z.output<typeof ConsolidationRequestSchema>;
