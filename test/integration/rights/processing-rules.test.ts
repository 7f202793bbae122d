/**
 * Paths that process records without serving them ask the processing judge: consolidation does not build views of
 * ended, restricted or objecting subjects' facts and gives a view only the valid time its inputs share; a write
 * cannot cite a restricted subject's record, nor one whose subject objected to the write's purpose; the derivation
 * audit reads no restricted subject's event as evidence. Each refusal looks exactly like a record that is not there.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import type { Role } from '../../../src/governance/auth/principal.js';

interface Run {
  built: number;
  refused: Record<string, number>;
  views: { id: string; inputs: number; status: string }[];
}

describe('processing paths obey the processing judge', { timeout: 240_000 }, () => {
  let app: TestApp;
  let tenant: string;
  const tag = randomUUID().slice(0, 6);
  const subject = (name: string) => `subj-${name}-${tag}`;

  const call = async (method: 'GET' | 'POST', url: string, roles: Role[], principal: string, payload?: object) =>
    app.request({
      method,
      url: `/v1/tenants/${tenant}${url}`,
      token: await app.token(tenant, roles, principal),
      ...(payload ? { payload } : {}),
    });
  const write = async (payload: object) => {
    const response = await call('POST', '/batches', ['agent'], 'agent-1', payload);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ events: { id: string }[]; memories: { id: string; status: string }[] }>();
  };
  /** One event and the memory extracted from it, about `who`. */
  const fact = (who: string, content: string, overrides: Record<string, unknown> = {}) => ({
    events: [sampleEvent({ subjects: [who], content })],
    memories: [
      sampleMemory({
        subjects: [who],
        attribute: 'contact-channel',
        content,
        provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-preference' },
        ...overrides,
      }),
    ],
  });
  const consolidate = async () => {
    const response = await call('POST', '/consolidations', ['agent'], 'agent-1', {
      namespace: 'support',
      trigger: 'manual',
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Run>();
  };
  const restrict = async (who: string, purposes?: string[]) => {
    const response = await call('POST', '/subject-rights/restrictions', ['dpo'], 'dora', {
      selector: { subjectId: who },
      legalGround: purposes ? 'art21-1' : 'art18-1a',
      reason: 'the subject asked in writing',
      requestKey: `k-${randomUUID()}`,
      ...(purposes ? { purposes } : {}),
    });
    expect(response.statusCode, response.body).toBe(201);
  };
  /** A memory of agent-1 citing `parentId`, with the parent's words (so the derivation audit supports it). */
  const citing = (who: string, parentId: string, content: string, purpose = 'customer-support') =>
    call('POST', '/batches', ['agent'], 'agent-1', {
      events: [],
      memories: [
        sampleMemory({
          subjects: [who],
          attribute: 'contact-channel',
          content,
          purpose,
          provenance: { eventIds: [], parentIds: [parentId], derivationRule: 'restate' },
        }),
      ],
    });

  beforeAll(async () => {
    app = await startTestApp({ config: { LETHE_CONSOLIDATION_WAIT_MS: '600000' } });
    tenant = uniqueTenant();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('builds no view of facts whose valid time ended, and no view past the earliest end of its inputs', async () => {
    const ended = subject('ended');
    const ending = subject('ending');
    const said = (who: string) => `Prefers fax contact about ${who}.`;
    for (let i = 0; i < 2; i++)
      await write(fact(ended, said(ended), { validFrom: '2026-01-01T00:00:00Z', validTo: '2026-02-01T00:00:00Z' }));
    await write(fact(ending, said(ending), { validFrom: '2026-01-01T00:00:00Z', validTo: '2030-01-01T00:00:00Z' }));
    await write(fact(ending, said(ending), { validFrom: '2026-03-01T00:00:00Z', validTo: '2031-01-01T00:00:00Z' }));

    const run = await consolidate();
    const views = await Promise.all(run.views.map((v) => app.services.memories.get(tenant, v.id)));
    // Only the still-valid pair became a view, valid while both inputs are.
    expect(views.map((v) => v?.subjects)).toEqual([[ending]]);
    expect(views[0]).toMatchObject({
      validFrom: new Date('2026-03-01T00:00:00Z'),
      validTo: new Date('2030-01-01T00:00:00Z'),
    });
    const retrieved = await call('POST', '/retrieve', ['agent'], 'agent-1', { query: `fax ${ended}`, k: 20 });
    expect(retrieved.statusCode).toBe(200);
    expect(retrieved.body).not.toContain(said(ended));
    expect(run.refused?.['valid-time']).toBe(2);
  });

  it('neither consolidates nor lets a write cite the records of a subject who restricted processing', async () => {
    const ben = subject('ben');
    const said = `Prefers pager contact about ${ben}.`;
    const written = [(await write(fact(ben, said))).memories[0]!.id, (await write(fact(ben, said))).memories[0]!.id];
    await restrict(ben);

    const run = await consolidate();
    const lineage = await Promise.all(written.map((id) => app.services.lineage.childrenOf(tenant, id)));
    expect(lineage.flat()).toEqual([]);
    expect(run.refused?.restricted).toBe(2);

    // Citing it reads exactly as citing a record that does not exist.
    const cited = await citing(subject('ann'), written[0]!, said);
    const missing = await citing(subject('ann'), `mem_${randomUUID().replace(/-/g, '')}`, said);
    expect(cited.statusCode, cited.body).toBe(missing.statusCode);
    expect(cited.json()).toEqual(missing.json());
    expect(cited.body).not.toContain(ben);
  });

  it('lets no write cite a record whose subject objected to the write’s purpose, and consolidates none of them', async () => {
    const olga = subject('olga');
    const said = `Prefers telegram contact about ${olga}.`;
    const written = [(await write(fact(olga, said))).memories[0]!.id, (await write(fact(olga, said))).memories[0]!.id];
    await restrict(olga, ['customer-support']);

    const run = await consolidate();
    const cited = await citing(olga, written[0]!, said);
    const missing = await citing(olga, `mem_${randomUUID().replace(/-/g, '')}`, said);
    expect(cited.statusCode, cited.body).toBe(missing.statusCode);
    expect(cited.json()).toEqual(missing.json());
    const lineage = await Promise.all(written.map((id) => app.services.lineage.childrenOf(tenant, id)));
    expect(lineage.flat()).toEqual([]);
    expect(run.refused?.objected).toBe(2);
  });

  it('follows a restriction along lineage: a record about someone else built from the subject’s is restricted too', async () => {
    const ben = subject('lin-ben');
    const ann = subject('lin-ann');
    const canary = `cn${randomUUID().slice(0, 8)}`;
    const said = `Prefers semaphore contact ${canary} about ${tag}.`;
    const bens = (await write(fact(ben, said))).memories[0]!.id;
    // A restatement labelled as ann's, built from ben's record and repeating his sentence.
    const restated = await citing(ann, bens, said);
    expect(restated.statusCode, restated.body).toBe(201);
    const annsId = restated.json<{ memories: { id: string }[] }>().memories[0]!.id;
    const served = async () => {
      const search = await call('POST', '/search', ['agent'], 'agent-1', { query: canary, k: 20 });
      const retrieve = await call('POST', '/retrieve', ['agent'], 'agent-1', { query: canary, k: 20 });
      const byId = await call('GET', `/memories/${annsId}`, ['agent'], 'agent-1');
      return { search: search.body.includes(canary), retrieve: retrieve.body.includes(canary), byId: byId.statusCode };
    };
    expect(await served()).toEqual({ search: true, retrieve: true, byId: 200 });

    await restrict(ben);
    expect(await served()).toEqual({ search: false, retrieve: false, byId: 404 });
    // Nor is it cited: exactly as a record that does not exist.
    const cited = await citing(ann, annsId, said);
    const missing = await citing(ann, `mem_${randomUUID().replace(/-/g, '')}`, said);
    expect(cited.statusCode, cited.body).toBe(missing.statusCode);
    expect(cited.json()).toEqual(missing.json());
    // A duty read still sees it, marked.
    const duty = await call('GET', `/memories/${annsId}?purpose=access-request`, ['dpo'], 'dora');
    expect(duty.statusCode, duty.body).toBe(200);
    expect(duty.body).toContain('"restricted":true');
  });

  it('reads no restricted subject’s event as evidence for a new write', async () => {
    const rita = subject('rita');
    const words = `Rita ordered parcel ${tag} for delivery on Monday morning.`;
    const earlier = await write(fact(rita, words));
    await restrict(rita);
    // A new write about her that the earlier event would support (or contradict): it is not read.
    const later = await write({
      events: [sampleEvent({ subjects: [rita], content: `Called about parcel ${tag}.` })],
      memories: [
        sampleMemory({
          subjects: [rita],
          kind: 'fact',
          attribute: 'delivery-day',
          content: words,
          provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-fact' },
        }),
      ],
    });
    const stored = await app.services.memories.get(tenant, later.memories[0]!.id);
    expect(stored?.derivation).toBeDefined();
    expect(stored!.derivation!.evidenceIds).not.toContain(earlier.events[0]!.id);
    expect(stored!.derivation!.counts.retrieved).toBe(0);
  });
});
