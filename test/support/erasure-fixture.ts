/**
 * A tenant with a subject whose data was derived to depth 3, one cross-subject summary (collateral), and a
 * control set of another subject's records that must survive any erasure of the first. Every memory states what
 * its evidence says, so the derivation audit admits each under `enforce`: the summary only with earlier history
 * beyond its parents ("lives in Porto" is in an event, not in either parent), so it is admitted as repaired and
 * its repairing events are lineage inputs the closure walks.
 */
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { sampleEvent, sampleMemory } from './samples.js';

export interface SubjectGraph {
  tenant: string;
  subject: string;
  other: string;
  events: string[];
  /** depth 1: from the subject's events; depth 2: summary; depth 3: a segment view of the summary, reachable only by lineage. */
  memories: string[];
  collateral: string;
  control: string[];
  canary: string;
  /** The agent that wrote every record: a principal who could read them all before an erasure. */
  writer: string;
}

async function write(app: TestApp, tenant: string, token: string, body: object) {
  const response = await app.request({ method: 'POST', url: `/v1/tenants/${tenant}/batches`, token, payload: body });
  expect(response.statusCode, response.body).toBe(201);
  const written = response.json<{
    events: { id: string }[];
    memories: { id: string; status: string; derivation?: string }[];
  }>();
  // Every memory of the graph is admitted as written, whatever the derivation audit's mode.
  for (const m of written.memories) expect(m.status, JSON.stringify(m)).toBe('active');
  return written;
}

export async function buildSubjectGraph(app: TestApp, tenant: string, canary: string): Promise<SubjectGraph> {
  const writer = 'graph-writer';
  const token = await app.token(tenant, ['agent'], writer);
  const subject = 'subject-erase';
  const other = 'subject-keep';
  const base = await write(app, tenant, token, {
    events: [
      sampleEvent({
        subjects: [subject],
        content: `Ana told support her codeword is ${canary} and she lives in Porto.`,
      }),
      sampleEvent({ subjects: [subject], content: `Ana asked for invoices by e-mail; reference ${canary}.` }),
      sampleEvent({ subjects: [other], content: 'Ben prefers phone calls in the afternoon.' }),
    ],
    memories: [
      sampleMemory({
        subjects: [subject],
        attribute: 'codeword',
        content: `Ana's codeword is ${canary}.`,
        provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-fact' },
      }),
      sampleMemory({
        subjects: [subject],
        attribute: 'invoice-channel',
        content: `Ana wants invoices by e-mail; reference ${canary}.`,
        provenance: { eventIds: ['#1'], parentIds: [], derivationRule: 'extract-preference' },
      }),
      sampleMemory({
        subjects: [other],
        attribute: 'call-time',
        content: 'Ben prefers phone calls in the afternoon.',
        provenance: { eventIds: ['#2'], parentIds: [], derivationRule: 'extract-preference' },
      }),
    ],
  });
  const [m1, m2, benMemory] = base.memories.map((m) => m.id) as [string, string, string];
  const summary = await write(app, tenant, token, {
    memories: [
      sampleMemory({
        subjects: [subject],
        kind: 'summary',
        attribute: 'profile',
        content: `Summary: Ana lives in Porto and wants invoices by e-mail; reference ${canary}.`,
        confidence: 0.8,
        provenance: { eventIds: [], parentIds: [m1, m2], derivationRule: 'summarise' },
      }),
      // Another subject's record swept in by lineage: collateral.
      sampleMemory({
        subjects: [other],
        kind: 'summary',
        attribute: 'contact-summary',
        content: 'Contact preferences: Ana wants invoices by e-mail; Ben prefers phone calls.',
        confidence: 0.8,
        provenance: { eventIds: [], parentIds: [m2, benMemory], derivationRule: 'summarise' },
      }),
    ],
  });
  const [s1, collateral] = summary.memories.map((m) => m.id) as [string, string];
  // Under `enforce` the summary stands on an event beyond its parents: repair lineage is part of the closure.
  if (summary.memories[0]!.derivation !== undefined && app.services.derivation.mode === 'enforce')
    expect(summary.memories[0]!.derivation).toBe('repaired');
  const view = await write(app, tenant, token, {
    memories: [
      sampleMemory({
        subjects: ['segment-porto'],
        kind: 'view',
        attribute: 'segment-profile',
        content: `View: Ana lives in Porto; reference ${canary}.`,
        confidence: 0.7,
        provenance: { eventIds: [], parentIds: [s1], derivationRule: 'profile-view' },
      }),
    ],
  });
  const control = await write(app, tenant, token, {
    events: [sampleEvent({ subjects: [other], content: 'Ben moved to Munich.' })],
    memories: [
      sampleMemory({
        subjects: [other],
        kind: 'fact',
        attribute: 'city',
        content: 'Ben lives in Munich.',
        provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-fact' },
      }),
    ],
  });
  return {
    tenant,
    subject,
    other,
    events: base.events.slice(0, 2).map((e) => e.id),
    memories: [m1, m2, s1, view.memories[0]!.id],
    collateral,
    control: [base.events[2]!.id, benMemory, control.events[0]!.id, control.memories[0]!.id],
    canary,
    writer,
  };
}

/** The ids the graph's writer finds by searching for `query` (history: superseded records too). */
export async function searchAsWriter(app: TestApp, graph: SubjectGraph, query: string): Promise<string[]> {
  const response = await app.request({
    method: 'POST',
    url: `/v1/tenants/${graph.tenant}/search`,
    token: await app.token(graph.tenant, ['agent'], graph.writer),
    payload: { query, k: 50, intent: 'history' },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { memory: { id: string } }[] }>().results.map((r) => r.memory.id);
}

/** Ids and content hashes of records, to prove a control set unchanged. */
export async function fingerprintRecords(app: TestApp, tenant: string, ids: string[]) {
  const events = await app.services.events.getMany(
    tenant,
    ids.filter((i) => i.startsWith('evt_')),
  );
  const memories = await app.services.memories.getMany(
    tenant,
    ids.filter((i) => i.startsWith('mem_')),
  );
  return [
    ...events.map((e) => `${e._id}:${e.contentHash}:${e.deleted}`),
    ...memories.map((m) => `${m._id}:${m.contentHash}:${m.status}`),
  ].sort();
}

/** Files an erasure request through the API as a DPO (Art. 17(1)(a) unless said otherwise); returns its id. */
export async function fileErasure(
  app: TestApp,
  tenant: string,
  selector: Record<string, unknown>,
  legalGround = 'art17-1a',
): Promise<string> {
  const filed = await app.request({
    method: 'POST',
    url: `/v1/tenants/${tenant}/erasure-requests`,
    token: await app.token(tenant, ['dpo'], 'dpo-1'),
    payload: { selector, legalGround },
  });
  expect(filed.statusCode, filed.body).toBe(202);
  return filed.json<{ id: string }>().id;
}

export async function waitForState(
  app: TestApp,
  tenant: string,
  requestId: string,
  states: string[],
  timeoutMs = 120_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const request = await app.services.erasureRequests.get(tenant, requestId);
    if (request && states.includes(request.state)) return request;
    if (Date.now() > deadline) throw new Error(`erasure ${requestId} is ${request?.state}, not ${states.join('|')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Waits for a request to complete, deciding on copies found outside its closure the way the test says (a request
 * naming memories by id finds the events they were extracted from, which state the same sentences).
 */
export async function completeErasure(
  app: TestApp,
  tenant: string,
  requestId: string,
  decision: 'extend' | 'certify',
  timeoutMs = 180_000,
) {
  const settled = await waitForState(app, tenant, requestId, ['completed', 'needs-dpo', 'needs-operator'], timeoutMs);
  if (settled.state !== 'needs-dpo') return settled;
  const decided = await app.request({
    method: 'POST',
    url: `/v1/tenants/${tenant}/erasure-requests/${requestId}/findings`,
    token: await app.token(tenant, ['dpo'], 'dpo-1'),
    payload: { decision, reason: 'decided in the test' },
  });
  expect(decided.statusCode, decided.body).toBe(202);
  return waitForState(app, tenant, requestId, ['completed', 'needs-operator'], timeoutMs);
}
