/**
 * One hostile write cannot pin the worker. A memory citing more evidence than its batch may read waits for a
 * reviewer without being judged on part of it; a memory at the verifier's worst case is stopped at the CPU deadline
 * and waits for a reviewer, while an honest write is admitted and an erasure of another subject completes beside
 * it, with no activity timing out. Outcomes and their order are asserted, never durations.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { uniqueId } from '../../support/harness.js';
import { activityTimeoutsOn } from '../../support/activity-timeouts.js';
import { WORST_CASE_MEMORY, worstCaseEvidence } from '../../support/verifier-worst-case.js';
import { MAX_OBLIGATIONS } from '../../../src/governance/derivation/derivation-audit.js';

const KiB = 1024;
/** The hostile memory's evidence: 256 citations (the most a memory may make) of the largest events. */
const EVIDENCE_BYTES = 8192 * KiB;

interface Written {
  events: { id: string }[];
  memories: { id: string; status: string; derivation?: string }[];
}

async function write(app: TestApp, tenant: string, payload: object): Promise<Written> {
  const response = await app.request({
    method: 'POST',
    url: `/v1/tenants/${tenant}/batches`,
    token: await app.token(tenant, ['agent'], 'agent-1'),
    payload,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Written>();
}

interface ReviewItem {
  evidence: { eventIds: string[] };
  derivation: {
    label: string;
    unresolvedBecause?: string;
    counts: { cited: number };
    obligations: { label: string; evidenceIds: string[] }[];
  };
}

async function reviewItem(app: TestApp, tenant: string, id: string): Promise<ReviewItem> {
  const response = await app.request({
    method: 'GET',
    url: `/v1/tenants/${tenant}/review-queue/${id}`,
    token: await app.token(tenant, ['reviewer'], 'rita'),
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<ReviewItem>();
}

const FACT = 'Ana moved to Berlin in May 2024 because she got a new job at Siemens.';

/** An event of about `bytes` that states FACT first; `n` keeps each one's content its own. */
function largeEvent(subject: string, bytes: number, n: number) {
  const filler = `Ana also mentioned the weather in Berlin, note ${n}. `;
  return sampleEvent({ subjects: [subject], content: FACT + ' ' + filler.repeat(Math.floor(bytes / filler.length)) });
}

function factAbout(subject: string, eventIds: string[]) {
  return sampleMemory({
    subjects: [subject],
    kind: 'fact',
    attribute: 'residence',
    content: 'Ana moved to Berlin in May 2024.',
    provenance: { eventIds, parentIds: [], derivationRule: 'extract-fact' },
  });
}

describe('a write citing more evidence than the byte caps allow', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Caps a few events cross (production: 128 KiB per audit, 8 MiB per batch), so the batch stays small.
    app = await startTestApp({
      config: {
        LETHE_DERIVATION_AUDIT_MAX_BYTES: String(48 * KiB),
        LETHE_DERIVATION_BATCH_MAX_BYTES: String(64 * KiB),
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('admits the memories that fit the batch budget as judged, and holds the rest for sign-off unjudged (evidence-budget)', async () => {
    const tenant = uniqueTenant();
    const subject = uniqueId('s');
    const written = await write(app, tenant, {
      events: [0, 1, 2, 3].map((n) => largeEvent(subject, 20 * KiB, n)),
      memories: [
        // 40 KiB, within its own cap and the batch's: judged.
        factAbout(subject, ['#0', '#1']),
        // 40 KiB more: within its own cap, past what the batch has left.
        factAbout(subject, ['#2', '#3']),
        // 80 KiB: past its own cap and the whole batch's.
        factAbout(subject, ['#0', '#1', '#2', '#3']),
      ],
    });
    const [judged, overBatch, overBoth] = written.memories;
    expect(judged).toMatchObject({ status: 'active', derivation: 'supported' });
    for (const m of [overBatch!, overBoth!]) {
      expect(m).toMatchObject({ status: 'candidate', derivation: 'unresolved' });
      const item = await reviewItem(app, tenant, m.id);
      // The reviewer sees why, and what was cited; no obligation carries a label or evidence from part of it.
      expect(item.derivation).toMatchObject({ label: 'unresolved', unresolvedBecause: 'evidence-budget' });
      expect(item.derivation.obligations.length).toBeGreaterThan(0);
      for (const o of item.derivation.obligations) expect(o).toMatchObject({ label: 'unresolved', evidenceIds: [] });
      expect(item.evidence.eventIds.length).toBeGreaterThan(0);
    }
    const queue = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/review-queue`,
      token: await app.token(tenant, ['reviewer'], 'rita'),
    });
    expect(
      queue
        .json<{ items: { id: string }[] }>()
        .items.map((i) => i.id)
        .sort(),
    ).toEqual([overBatch!.id, overBoth!.id].sort());
  });
});

describe('a write at the verifier worst case, beside honest work', () => {
  let app: TestApp;
  let hostileStarted: Promise<void>;
  /** What happened, in order: the hostile views' start and end (seen at the verifier), and the writes' answers. */
  const order: string[] = [];
  const once = (step: string) => {
    if (!order.includes(step)) order.push(step);
  };
  beforeAll(async () => {
    app = await startTestApp({
      config: {
        // An operator's choice that lets a memory cite 8 MiB, so the CPU deadline is the only bound on its audit.
        LETHE_DERIVATION_AUDIT_MAX_BYTES: String(EVIDENCE_BYTES),
        LETHE_DERIVATION_BATCH_MAX_BYTES: String(2 * EVIDENCE_BYTES),
        // A deadline an honest write finishes well within, and a view of 8 MiB at the worst case never does.
        LETHE_VERIFIER_DEADLINE_MS: '8000',
        // The hostile audit's two views take two threads; a third serves the honest write meanwhile.
        LETHE_VERIFIER_THREADS: '3',
      },
    });
    // Sees (never changes) what the verifier is asked and when it answers: the honest work starts once the hostile
    // views are in it, and must be done before the first of them ends.
    const threaded = app.services.derivation.verifier;
    let started!: () => void;
    hostileStarted = new Promise((resolve) => (started = resolve));
    app.services.derivation.verifier = {
      id: threaded.id,
      version: threaded.version,
      verify(content, obligations, evidence, signal) {
        if (obligations.length <= MAX_OBLIGATIONS / 2) return threaded.verify(content, obligations, evidence, signal);
        once('hostile views started');
        started();
        return threaded.verify(content, obligations, evidence, signal).finally(() => once('hostile views ended'));
      },
    };
  });
  afterAll(async () => {
    await app?.close();
  });

  it('holds the hostile memory for sign-off, unresolved (timeout), while an honest write is admitted and an erasure completes', async () => {
    const hostileTenant = uniqueTenant();
    const honestTenant = uniqueTenant();
    const subject = uniqueId('s');
    const graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    // The evidence, stored beforehand in batches the body limit admits; the hostile batch cites it by id.
    const evidence: string[] = [];
    const contents = worstCaseEvidence(EVIDENCE_BYTES);
    for (let at = 0; at < contents.length; at += 24) {
      const batch = contents.slice(at, at + 24).map((content) => sampleEvent({ subjects: [subject], content }));
      evidence.push(...(await write(app, hostileTenant, { events: batch })).events.map((e) => e.id));
    }
    expect(evidence.length).toBeLessThanOrEqual(256);

    const hostile = write(app, hostileTenant, {
      memories: [
        sampleMemory({
          subjects: [subject],
          kind: 'fact',
          attribute: 'itinerary',
          content: WORST_CASE_MEMORY,
          provenance: { eventIds: evidence, parentIds: [], derivationRule: 'extract-fact' },
        }),
      ],
    }).then((written) => {
      once('hostile admitted');
      return written;
    });
    // Either the hostile views reach the verifier, or the write ends first (and the order below says so).
    await Promise.race([hostileStarted, hostile]);
    const erasure = fileErasure(app, graph.tenant, { subjectId: graph.subject }).then((id) =>
      completeErasure(app, graph.tenant, id, 'extend'),
    );
    const honest = await write(app, honestTenant, {
      events: [sampleEvent({ subjects: ['subject-honest'], content: FACT })],
      memories: [factAbout('subject-honest', ['#0'])],
    });
    once('honest admitted');
    const [hostileWritten, erased] = await Promise.all([hostile, erasure]);

    expect(order).toEqual(['hostile views started', 'honest admitted', 'hostile views ended', 'hostile admitted']);
    expect(honest.memories[0]).toMatchObject({ status: 'active', derivation: 'supported' });
    const memory = hostileWritten.memories[0]!;
    expect(memory).toMatchObject({ status: 'candidate', derivation: 'unresolved' });
    const item = await reviewItem(app, hostileTenant, memory.id);
    expect(item.derivation).toMatchObject({ label: 'unresolved', unresolvedBecause: 'timeout' });
    expect(erased.state).toBe('completed');
    // Nothing on the worker's queue timed out: its event loop kept heartbeating and finishing activities.
    const timeouts = await activityTimeoutsOn(app.worker.client, app.worker.taskQueue);
    expect(timeouts.workflows).toBeGreaterThan(0);
    expect(timeouts).toMatchObject({ total: 0 });
  }, 600_000);
});
