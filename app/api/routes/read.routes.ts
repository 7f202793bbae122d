import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EventStore } from '../../../src/substrate/events/event-store.js';
import type { MemoryStore } from '../../../src/substrate/memories/memory-store.js';
import { seeEvent, seeMemory } from '../../../src/governance/read/read-judge.js';
import { intentOf, type Reader } from '../../../src/governance/read/reader.js';
import type { ReadTrace } from '../../../src/retrieval/read-trace.js';
import { parseOrThrow } from '../../../src/shared/validation.js';
import { principalOf } from '../authenticate.js';
import { presentEvent, presentMemory } from '../presenters.js';
import { notVisible, requireReader, type ReadingDeps } from './read-access.js';
import { errorResponses, tenantIdParams } from './route-schemas.js';

const EventQuerySchema = z.strictObject({ purpose: z.string().min(1).max(64).optional() });

const MemoryQuerySchema = z.strictObject({
  purpose: z.string().min(1).max(64).optional(),
  /**
   * Absent: a context read is a `current` read (an agent is not handed a superseded, contested or ended value by
   * naming its id), a duty read a `history` read (every status short of erasure, as its duty needs).
   */
  intent: z.enum(['current', 'history', 'as-of']).optional(),
  asOf: z.iso.datetime({ offset: true }).optional(),
});

/**
 * The readers a read by id is judged as, in turn: the reader as asked when the request names an intent; otherwise
 * its context grants asking about the present, then its duty grants asking about history.
 */
function byIdReaders(reader: Reader, named: boolean): Reader[] {
  if (named) return [reader];
  const context = reader.grants.filter((g) => !g.duty);
  const duty = reader.grants.filter((g) => g.duty);
  return [
    ...(context.length > 0 ? [{ ...reader, grants: context, intent: 'current' as const }] : []),
    ...(duty.length > 0 ? [{ ...reader, grants: duty, intent: 'history' as const }] : []),
  ];
}

/** Reads by id, judged like every other read: a record the reader may not see answers exactly as a missing one. */
export function registerReadRoutes(
  app: FastifyInstance,
  deps: ReadingDeps & { events: EventStore; memories: MemoryStore; trace: ReadTrace },
): void {
  app.get(
    '/v1/tenants/:tenant/events/:id',
    {
      config: { action: 'event.read', reads: 'records' },
      schema: {
        summary: 'Read one event (content to readers the policy grants it; ids and hashes to the auditor)',
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const { purpose } = parseOrThrow(EventQuerySchema, request.query);
      const principal = principalOf(request);
      const reader = await requireReader(
        deps,
        principal,
        { ...(purpose ? { purpose } : {}), intent: 'history' },
        'event',
      );
      const event = await deps.events.get(principal.tenant, id);
      const sight = seeEvent(reader, event);
      if (!sight) throw await notVisible(deps, reader, 'event', event?._id ?? null);
      if (sight.view === 'content') await deps.trace.recordRead(reader, 'event', `id:${id}`, [id]);
      return presentEvent(sight);
    },
  );

  app.get(
    '/v1/tenants/:tenant/memories/:id',
    {
      config: { action: 'memory.read', reads: 'records' },
      schema: {
        summary: "Read one memory (for a purpose the read policy allows; the duty of the reader's role by default)",
        params: tenantIdParams,
        response: errorResponses,
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const query = parseOrThrow(MemoryQuerySchema, request.query);
      const principal = principalOf(request);
      const reader = await requireReader(
        deps,
        principal,
        { ...(query.purpose ? { purpose: query.purpose } : {}), ...intentOf(query) },
        'memory',
      );
      const memory = await deps.memories.get(principal.tenant, id);
      for (const judged of byIdReaders(reader, query.intent !== undefined)) {
        const sight = seeMemory(judged, memory);
        if (!sight) continue;
        if (sight.view === 'content') await deps.trace.recordRead(judged, 'memory', `id:${id}`, [id]);
        return presentMemory(sight);
      }
      throw await notVisible(deps, reader, 'memory', memory?._id ?? null);
    },
  );
}
