/**
 * Writes racing an erasure, landed exactly at each step boundary by holding the next activity until they are
 * done. Two kinds of write at every boundary:
 * - through the API: refused with 409 naming the request once the fence is up (from `locate` on), and erased
 *   by the request when it was admitted before (before `locate`, or a derivation before the closure fenced it);
 * - raced: the real admission whose first fence check ran before the fence went up and whose records land
 *   now: its check after writing sees the fence and takes the records back (409), or, before the fence, the
 *   request locates and erases them.
 * After completion nothing admitted about the subject is readable, searchable or in the stores, and the
 * certificate's closure lists every erased id.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { stepGate } from '../../support/step-gate.js';
import { admitBatch, type StagedBatch } from '../../../src/ingestion/admit-batch.js';
import { EventInputSchema, MemoryInputSchema } from '../../../src/ingestion/write-schemas.js';
import type { ErasureFenceStore } from '../../../src/governance/erasure/erasure-fence-store.js';
import { indexUnlessErased } from '../../../src/substrate/search/index-unless-erased.js';
import type { CertificateBody } from '../../../src/governance/certificates/certificate.js';

/** Each activity of a round, in order: a boundary is "just before it runs". */
const BOUNDARIES = [
  'locateTargets',
  'computeClosure',
  'authoriseAndCheckHolds',
  'markDeletedAndTombstone',
  'purgeRecords',
  'expungeIndex',
  'verifyErasure',
  'issueCertificate',
] as const;
type Boundary = (typeof BOUNDARIES)[number];

interface Attempt {
  boundary: Boundary;
  kind: 'api-subject' | 'api-derivation' | 'raced-subject' | 'raced-derivation';
  status: number;
  /** Admitted: the ids written. Refused: the memory id it would have had (it must not exist). */
  ids: string[];
  type?: string | null;
  body?: string;
}

interface Case {
  boundary: Boundary;
  tenant: string;
  subject: string;
  canary: string;
  /** A located memory about the subject, cited by the derivations. */
  located: string;
  requestId: string;
  attempts: Attempt[];
  done: boolean;
}

describe('writes racing an erasure at every step boundary', () => {
  let app: TestApp;
  const cases = new Map<string, Case>();

  async function searchAsRacer(tenant: string, query: string): Promise<string[]> {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/search`,
      token: await app.token(tenant, ['agent'], 'agent-racer'),
      payload: { query, k: 20, intent: 'history' },
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ results: { memory: { id: string } }[] }>().results.map((r) => r.memory.id);
  }

  async function write(c: Case, body: object) {
    return app.request({
      method: 'POST',
      url: `/v1/tenants/${c.tenant}/batches`,
      token: await app.token(c.tenant, ['agent'], 'agent-racer'),
      payload: body,
    });
  }

  /**
   * The real admission with its first fence lookup answered "not fenced", as if that check ran just before
   * the fence went up and the writes land at this boundary.
   */
  async function racedWrite(c: Case, memory: ReturnType<typeof sampleMemory>, event?: ReturnType<typeof sampleEvent>) {
    const s = app.services;
    let blind = true;
    const fences: ErasureFenceStore = {
      ...s.fences,
      firstFenced: async (tenant, keys) => {
        if (blind) {
          blind = false;
          return null;
        }
        return s.fences.firstFenced(tenant, keys);
      },
    };
    const memoryId = `mem_${randomUUID()}`;
    const batch: StagedBatch = {
      roles: ['agent'],
      events: event ? [EventInputSchema.parse(event)] : [],
      memories: [
        {
          ...MemoryInputSchema.parse(
            event ? { ...memory, provenance: { ...memory.provenance, eventIds: ['#0'] } } : memory,
          ),
          id: memoryId,
        },
      ],
    };
    const result = await admitBatch({ ...s, fences }, c.tenant, 'agent-racer', `stage_${randomUUID()}`, batch);
    if (result.refused) return { status: 409, ids: [memoryId], type: result.refused.type };
    await indexUnlessErased(s.index, s.memories, c.tenant, [memoryId]);
    return { status: 201, ids: [...result.events.map((e) => e.id), memoryId], type: null };
  }

  async function raceAt(c: Case, boundary: Boundary) {
    const tag = `${c.canary} ${boundary}`;
    const apiSubject = await write(c, {
      events: [sampleEvent({ subjects: [c.subject], content: `New note about ${tag}.` })],
      memories: [sampleMemory({ subjects: [c.subject], content: `New fact about ${tag}.` })],
    });
    const apiIds = apiSubject.statusCode === 201 ? idsOf(apiSubject.json()) : [];
    c.attempts.push({
      boundary,
      kind: 'api-subject',
      status: apiSubject.statusCode,
      ids: apiIds,
      body: apiSubject.body,
    });
    const apiDerived = await write(c, {
      memories: [
        sampleMemory({
          subjects: ['segment-racers'],
          kind: 'summary',
          content: `Derived summary ${tag}.`,
          confidence: 0.5,
          provenance: { eventIds: [], parentIds: [c.located], derivationRule: 'summarise' },
        }),
      ],
    });
    c.attempts.push({
      boundary,
      kind: 'api-derivation',
      status: apiDerived.statusCode,
      ids: apiDerived.statusCode === 201 ? idsOf(apiDerived.json()) : [],
    });
    const racedSubject = await racedWrite(
      c,
      sampleMemory({
        subjects: [c.subject],
        content: `Raced fact about ${tag}.`,
        provenance: { eventIds: [], parentIds: [], derivationRule: 'extract-fact' },
      }),
      sampleEvent({ subjects: [c.subject], content: `Raced note about ${tag}.` }),
    );
    c.attempts.push({ boundary, kind: 'raced-subject', ...racedSubject });
    const racedDerivation = await racedWrite(
      c,
      sampleMemory({
        subjects: ['segment-racers'],
        kind: 'summary',
        content: `Raced summary ${tag}.`,
        confidence: 0.5,
        provenance: { eventIds: [], parentIds: [c.located], derivationRule: 'summarise' },
      }),
    );
    c.attempts.push({ boundary, kind: 'raced-derivation', ...racedDerivation });
  }

  beforeAll(async () => {
    app = await startTestApp({
      activityInterceptors: [
        stepGate(async (activity, input) => {
          const c = cases.get(String(input.tenant ?? ''));
          if (!c || c.done || activity !== c.boundary) return;
          c.done = true;
          await raceAt(c, c.boundary);
        }),
      ],
    });
    // One tenant and request per boundary, all running at once.
    await Promise.all(
      BOUNDARIES.map(async (boundary) => {
        const tenant = uniqueTenant();
        const subject = `subject-${boundary}`;
        const canary = `CANARY-${randomUUID()}`;
        const base = await write({ tenant } as Case, {
          events: [sampleEvent({ subjects: [subject], content: `Original note ${canary}.` })],
          memories: [sampleMemory({ subjects: [subject], content: `Original fact ${canary}.` })],
        });
        expect(base.statusCode, base.body).toBe(201);
        const located = base.json<{ memories: { id: string }[] }>().memories[0]!.id;
        // Positive control: the writer's search serves the record before the erasure.
        expect(await searchAsRacer(tenant, canary)).toContain(located);
        const c: Case = { boundary, tenant, subject, canary, located, requestId: '', attempts: [], done: false };
        // The gate keys on the tenant: registered before the workflow can reach its first activity.
        cases.set(tenant, c);
        c.requestId = await fileErasure(app, tenant, { subjectId: subject });
      }),
    );
    for (const c of cases.values())
      await waitForState(app, c.tenant, c.requestId, ['completed', 'needs-operator', 'rejected'], 180_000);
  }, 300_000);
  afterAll(async () => {
    await app?.close();
  });

  it('lands a race at every boundary and completes every request', async () => {
    for (const c of cases.values()) {
      expect(c.done, `race at ${c.boundary} happened`).toBe(true);
      const request = await app.services.erasureRequests.get(c.tenant, c.requestId);
      expect(request?.state, c.boundary).toBe('completed');
    }
  });

  it('refuses writes about the subject and derivations from its closure once fenced, telling the agent nothing of the erasure', async () => {
    for (const c of cases.values()) {
      for (const a of c.attempts.filter((x) => x.kind.startsWith('api-'))) {
        const fencedFrom = a.kind === 'api-subject' ? 'computeClosure' : 'authoriseAndCheckHolds';
        if (BOUNDARIES.indexOf(a.boundary) >= BOUNDARIES.indexOf(fencedFrom)) {
          expect([409, 422], `${a.kind} at ${a.boundary}`).toContain(a.status);
          if (a.kind === 'api-subject') {
            // The agent is refused without learning of the erasure: the item only, neither the request nor the
            // subject's field, and nothing of the content.
            expect(a.body).toMatch(/"field":"(events|memories)\.0".*|not admitted now/);
            expect(a.body).not.toContain(c.requestId);
            expect(a.body).not.toContain('subjects');
            expect(a.body).not.toContain(c.canary);
          }
        } else {
          expect(a.status, `${a.kind} at ${a.boundary} (before the fence)`).toBe(201);
        }
      }
    }
    // A raced admission is refused by its check after writing once the fence covers it, and admitted before.
    for (const c of cases.values()) {
      for (const a of c.attempts.filter((x) => x.kind.startsWith('raced-'))) {
        const fencedFrom = a.kind === 'raced-subject' ? 'computeClosure' : 'authoriseAndCheckHolds';
        if (BOUNDARIES.indexOf(a.boundary) >= BOUNDARIES.indexOf(fencedFrom)) {
          expect(a.status, `${a.kind} at ${a.boundary}`).toBe(409);
        } else {
          expect(a.status, `${a.kind} at ${a.boundary} (before the fence)`).toBe(201);
        }
      }
    }
  });

  it('leaves nothing admitted during the request readable, searchable or stored, and certifies it', async () => {
    let survivors = 0;
    let tried = 0;
    for (const c of cases.values()) {
      const admitted = c.attempts.filter((a) => a.status === 201).flatMap((a) => a.ids);
      tried += c.attempts.length;
      // As the writer of every record: a principal who could see them all.
      const token = await app.token(c.tenant, ['agent'], 'agent-racer');
      for (const id of [...admitted, c.located]) {
        const kind = id.startsWith('evt_') ? 'events' : 'memories';
        const read = await app.request({ method: 'GET', url: `/v1/tenants/${c.tenant}/${kind}/${id}`, token });
        if (read.statusCode !== 404) survivors++;
      }
      const stored = [
        ...(await app.services.memories.getMany(c.tenant, admitted)),
        ...(await app.services.events.getMany(c.tenant, admitted)),
      ];
      survivors += stored.length;
      // Refused writes left nothing, and no record about the subject is left in either store, deleted or not.
      const refused = c.attempts.filter((a) => a.status !== 201).flatMap((a) => a.ids);
      survivors += (await app.services.memories.getMany(c.tenant, refused)).length;
      survivors += (await app.services.memories.idsBySubject(c.tenant, c.subject)).length;
      survivors += (await app.services.events.idsBySubject(c.tenant, c.subject, { includeDeleted: true })).length;
      const probe = await app.services.index.probe(c.tenant, { ids: admitted, text: c.canary, subjects: [c.subject] });
      survivors += probe.found.length;
      const search = await app.request({
        method: 'POST',
        url: `/v1/tenants/${c.tenant}/search`,
        token,
        payload: { query: c.canary, k: 20, intent: 'history' },
      });
      expect(search.statusCode, search.body).toBe(200);
      survivors += search.json<{ results: unknown[] }>().results.length;

      const request = (await app.services.erasureRequests.get(c.tenant, c.requestId))!;
      const certificate: CertificateBody = (await app.services.certificates.get(
        c.tenant,
        request.certificateIds.at(-1)!,
      ))!;
      expect(certificate.status).toBe('complete');
      expect(certificate.closure.ids).toEqual(expect.arrayContaining([...admitted, c.located]));
      // Every kind of probe ran over something: the locate and subject probes always check one selector, so a
      // count of probes that checked anything would pass with no sample of the erased content at all.
      expect(
        certificate.probes.filter((p) => p.checked > 0).map((p) => `${p.kind}:${p.target}`),
        c.boundary,
      ).toEqual(
        expect.arrayContaining([
          'id:mongodb',
          'id:elasticsearch',
          'text:elasticsearch',
          'text:api',
          'content-hash:mongodb',
          'vector:elasticsearch',
          'locate:mongodb',
          'subject:elasticsearch',
        ]),
      );
      for (const p of certificate.probes) expect(p.found, `${c.boundary}: ${p.kind} probe of ${p.target}`).toBe(0);
      // Per-store counts add up to the closure.
      const deleted = certificate.stores
        .filter((s) => s.store === 'mongodb' && (s.collection === 'memories' || s.collection === 'events'))
        .reduce((n, s) => n + s.deleted, 0);
      expect(deleted, c.boundary).toBe(certificate.closure.total);
    }
    expect(tried).toBeGreaterThanOrEqual(BOUNDARIES.length * 3);
    expect(survivors).toBe(0);
  });

  it('lowers the fence on completion: new data about the subject is admitted again', async () => {
    const c = [...cases.values()].find((x) => x.boundary === 'purgeRecords')!;
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${c.tenant}/events`,
      token: await app.token(c.tenant, ['agent']),
      payload: sampleEvent({ subjects: [c.subject], content: 'after completion this is admitted again' }),
    });
    expect(response.statusCode, response.body).toBe(201);
  });
});

function idsOf(body: { events?: { id: string }[]; memories?: { id: string }[] }): string[] {
  return [...(body.events ?? []).map((e) => e.id), ...(body.memories ?? []).map((m) => m.id)];
}
