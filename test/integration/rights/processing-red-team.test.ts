/**
 * The processing red team: an agent tries every act on records that carry canaries and break one rule each (another
 * tenant, another owner, a restricted or objecting subject, a legal hold, an erasure, an ended valid time, an open
 * rectification, a stale derivation, quarantine), through the routes it has: reading by id and by search (serve),
 * citing in a new write (cite), a new write whose derivation audit searches the subject's history (evidence), and
 * a consolidation run (consolidate). The oracle is computed here, from the rows as stored and the filings this test
 * made, with the acts × rules table's words rather than the judge's code. A clean control record must be used by
 * every act, so the red team cannot pass by refusing everything.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { withStoredMarks } from '../../support/stored-marks.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { Role } from '../../../src/governance/auth/principal.js';
import { viewKey } from '../../../src/substrate/views/consolidation-plan.js';

const CASES = [
  'clean',
  'other-tenant',
  'other-owner',
  'restricted',
  'objected',
  'held',
  'deleted',
  'ended',
  'contested',
  'stale',
  'quarantined',
] as const;
type Case = (typeof CASES)[number];
type Act = 'serve' | 'cite' | 'evidence' | 'consolidate';

interface Planted {
  tenant: string;
  subject: string;
  canary: string;
  sentence: string;
  memories: string[];
  events: string[];
}

/** A stored row as the oracle reads it: only the marks, straight from the collection. */
interface Row {
  _id: string;
  tenant: string;
  scope?: string;
  subjects: string[];
  status?: string;
  deleted?: boolean;
  restrictedBy?: string[];
  validTo?: Date | null;
  contestedBy?: string[];
  stale?: unknown;
  quarantinedFor?: string[];
}

describe('processing red team', { timeout: 600_000 }, () => {
  let app: TestApp;
  let tenant: string;
  let elsewhere: string;
  const tag = randomUUID().slice(0, 6);
  const planted = {} as Record<Case, Planted>;
  /** What this test filed: the oracle's knowledge of restrictions, never read back from the code. */
  const restrictedSubjects = new Set<string>();
  const objectedSubjects = new Set<string>();
  const violations: string[] = [];
  const allowedControl = new Set<Act>();
  let calls = 0;

  const call = async (
    method: 'GET' | 'POST',
    url: string,
    roles: Role[],
    principal: string,
    payload?: object,
    at = tenant,
  ) => {
    calls++;
    return app.request({
      method,
      url: `/v1/tenants/${at}${url}`,
      token: await app.token(at, roles, principal),
      ...(payload ? { payload } : {}),
    });
  };

  async function plant(name: Case): Promise<Planted> {
    const at = name === 'other-tenant' ? elsewhere : tenant;
    const writer = name === 'other-owner' ? 'agent-2' : 'agent-1';
    const subject = `rt-${name}-${tag}`;
    const canary = `cn${name.replace(/-/g, '')}${randomUUID().slice(0, 6)}`;
    const sentence = `Prefers contact by ${canary} courier.`;
    const origin = name === 'quarantined' ? { origin: 'tool-output', source: 'crm-tool' } : {};
    const validity = name === 'ended' ? { validFrom: '2026-01-01T00:00:00Z', validTo: '2026-02-01T00:00:00Z' } : {};
    const memories: string[] = [];
    const events: string[] = [];
    for (let i = 0; i < 2; i++) {
      const response = await call(
        'POST',
        '/batches',
        ['agent'],
        writer,
        {
          events: [sampleEvent({ subjects: [subject], content: `${sentence} Said on call ${i}.`, ...origin })],
          memories: [
            sampleMemory({
              subjects: [subject],
              attribute: 'contact-channel',
              content: sentence,
              provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-preference' },
              ...validity,
            }),
          ],
        },
        at,
      );
      expect(response.statusCode, response.body).toBe(201);
      const body = response.json<{ events: { id: string }[]; memories: { id: string }[] }>();
      memories.push(body.memories[0]!.id);
      events.push(body.events[0]!.id);
    }
    return { tenant: at, subject, canary, sentence, memories, events };
  }

  async function breakRule(name: Case, p: Planted) {
    const restrict = async (purposes?: string[]) => {
      const filed = await call('POST', '/subject-rights/restrictions', ['dpo'], 'dora', {
        selector: { subjectId: p.subject },
        legalGround: purposes ? 'art21-1' : 'art18-1a',
        reason: 'the subject asked in writing',
        requestKey: `k-${randomUUID()}`,
        ...(purposes ? { purposes } : {}),
      });
      expect(filed.statusCode, filed.body).toBe(201);
    };
    switch (name) {
      case 'restricted':
        restrictedSubjects.add(p.subject);
        return restrict();
      case 'objected':
        objectedSubjects.add(p.subject);
        return restrict(['customer-support']);
      case 'held': {
        const placed = await call('POST', '/legal-holds', ['legal'], 'counsel-1', {
          scope: { recordIds: [...p.memories, ...p.events] },
          caseRef: `case-${tag}`,
        });
        expect(placed.statusCode, placed.body).toBe(201);
        return;
      }
      case 'deleted':
        await completeErasure(app, tenant, await fileErasure(app, tenant, { subjectId: p.subject }), 'extend');
        return;
      case 'contested':
        for (const id of p.memories) await app.services.memories.contest(tenant, id, `rct_${tag}`, true);
        return;
      case 'stale':
        await app.services.memories.flagStale(tenant, p.memories, {
          because: `rectification:rct_${tag}`,
          since: new Date(),
        });
        return;
      default:
        return;
    }
  }

  /** The rows, with the marks stored beside them (holds, contests, stale flags) read from their own collection. */
  const rowsOf = async (collection: string, ids: string[]) =>
    withStoredMarks(
      app.runtime.db,
      await app.runtime.db
        .collection<Row>(collection)
        .find({ _id: { $in: ids } } as never)
        .toArray(),
    );

  /** The oracle: may agent-1, in `tenant`, use this stored row for `act`? Written from the table's words. */
  function oracle(act: Act | 'evidence-event', row: Row | undefined): boolean {
    if (!row || row.tenant !== tenant) return false;
    if (row.scope !== 'principal:agent-1' && row.scope !== 'tenant') return false;
    const restricted = row.subjects.some((s) => restrictedSubjects.has(s));
    const objected = row.subjects.some((s) => objectedSubjects.has(s));
    const held = (row.restrictedBy ?? []).length > 0;
    if (restricted || objected || held) return false;
    if (act === 'evidence-event') return row.deleted === false;
    const status = row.status ?? 'missing';
    const ended = row.validTo instanceof Date && row.validTo.getTime() <= Date.now();
    const contested = (row.contestedBy ?? []).length > 0;
    const stale = row.stale !== undefined && row.stale !== null;
    switch (act) {
      case 'serve':
        return ['active', 'disputed'].includes(status) && !ended && !contested && !stale;
      case 'cite':
        return ['active', 'disputed', 'superseded'].includes(status) && !contested && !stale;
      case 'consolidate':
        return status === 'active' && !ended && !contested && !stale;
      default:
        return false;
    }
  }

  function judged(act: Act, name: Case, id: string, used: boolean, row: Row | undefined) {
    const allowed = oracle(act, row);
    if (name === 'clean' && used) allowedControl.add(act);
    if (used && !allowed) violations.push(`${act} used ${name} record ${id}`);
  }

  beforeAll(async () => {
    app = await startTestApp({ config: { LETHE_CONSOLIDATION_WAIT_MS: '600000' } });
    tenant = uniqueTenant();
    elsewhere = uniqueTenant();
    for (const name of CASES) planted[name] = await plant(name);
    for (const name of CASES) await breakRule(name, planted[name]);
  }, 600_000);
  afterAll(async () => {
    await app?.close();
  });

  it('serves no record the oracle refuses, by id or by search', async () => {
    for (const name of CASES) {
      const p = planted[name];
      const rows = new Map((await rowsOf(Collections.memories, p.memories)).map((r) => [r._id, r]));
      const search = await call('POST', '/search', ['agent'], 'agent-1', { query: p.canary, k: 50 });
      expect(search.statusCode).toBe(200);
      for (const id of p.memories) {
        const byId = await call('GET', `/memories/${id}`, ['agent'], 'agent-1');
        judged('serve', name, id, byId.statusCode === 200, rows.get(id));
        judged('serve', name, id, search.body.includes(id), rows.get(id));
      }
      if (!oracle('serve', rows.get(p.memories[0]!)))
        if (search.body.includes(p.canary)) violations.push(`serve showed ${name} canary in search`);
    }
  });

  // Before the writes that cite or add evidence, so each planted pair is a group of its own, whose view id is known.
  it('consolidates no record the oracle refuses: no view of a refused pair is planned, built or refused', async () => {
    const run = await call('POST', '/consolidations', ['agent'], 'agent-1', {
      namespace: 'support',
      trigger: 'manual',
    });
    expect(run.statusCode, run.body).toBe(200);
    const planned = new Set(run.json<{ views: { id: string }[] }>().views.map((v) => v.id));
    for (const name of CASES) {
      const p = planted[name];
      const rows = await rowsOf(Collections.memories, p.memories);
      const stored = await app.services.memories.getMany(p.tenant, p.memories);
      if (rows.length !== 2 || stored.length !== 2) continue;
      // A view's id is a function of its inputs (id, version, content hash), its rule and its model.
      const key = viewKey(tenant, 'view', stored, { modelVersion: 'extractive@1', promptVersion: null });
      const used = planned.has(`mem_view_${key.slice(0, 32)}`);
      for (const row of rows) judged('consolidate', name, row._id, used, row);
    }
  });

  it('lets no write cite a record the oracle refuses', async () => {
    for (const name of CASES) {
      const p = planted[name];
      const rows = new Map((await rowsOf(Collections.memories, p.memories)).map((r) => [r._id, r]));
      const id = p.memories[0]!;
      const cited = await call('POST', '/batches', ['agent'], 'agent-1', {
        events: [],
        memories: [
          sampleMemory({
            subjects: [`rt-citer-${tag}`],
            attribute: 'restated',
            content: p.sentence,
            provenance: { eventIds: [], parentIds: [id], derivationRule: 'restate' },
          }),
        ],
      });
      judged('cite', name, id, cited.statusCode === 201, rows.get(id));
      if (cited.statusCode !== 201) expect(cited.body).not.toContain(p.canary);
    }
  });

  it('reads no event the oracle refuses as evidence for a new write', async () => {
    for (const name of CASES) {
      const p = planted[name];
      const rows = new Map((await rowsOf(Collections.events, p.events)).map((r) => [r._id, r]));
      const written = await call('POST', '/batches', ['agent'], 'agent-1', {
        events: [sampleEvent({ subjects: [p.subject], content: `Asked about the account ${randomUUID()}.` })],
        memories: [
          sampleMemory({
            subjects: [p.subject],
            attribute: 'contact-channel',
            content: p.sentence,
            provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-preference' },
          }),
        ],
      });
      if (written.statusCode !== 201) continue;
      const memoryId = written.json<{ memories: { id: string }[] }>().memories[0]!.id;
      const stored = await app.services.memories.get(tenant, memoryId);
      const evidence = new Set(stored?.derivation?.evidenceIds ?? []);
      // The derived record joins the subject's records: it is not one of the planted pair the other acts judge.
      for (const id of p.events) {
        const used = evidence.has(id);
        if (name === 'clean' && used) allowedControl.add('evidence');
        if (used && !oracle('evidence-event', rows.get(id))) violations.push(`evidence read ${name} event ${id}`);
      }
    }
  });

  it('finds 0 violations, and the clean control used by every act', () => {
    console.info(`processing red team: ${calls} calls, ${violations.length} violations`);
    expect(violations).toEqual([]);
    expect([...allowedControl].sort()).toEqual(['cite', 'consolidate', 'evidence', 'serve']);
  });
});
