/**
 * A red team over every route of `/openapi.json`: generated calls by principals of every role and by multi-role
 * tokens, with other principals' ids, another tenant's ids, ids of held, deleted, erased and candidate records,
 * purposes the caller does not hold, every intent, and odd query and body shapes. The tenant's records each carry
 * a canary string; every response body — 2xx and 4xx alike — is scanned for canaries the caller may not read.
 * Who may read what is computed here from the records as stored and the rules as the read table in docs/rules.md states
 * them, independently of the code under test. `LETHE_READ_REDTEAM_CALLS` changes the number of calls: `npm test`
 * makes 6 000 of them, `npm run test:red-team` the full 20 000.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { withStoredMarks } from '../../support/stored-marks.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { EventRecord, MemoryRecord } from '../../../src/substrate/model/records.js';
import type { Role } from '../../../src/governance/auth/principal.js';

const CALLS = Number(process.env.LETHE_READ_REDTEAM_CALLS ?? 6_000);
const IN_FLIGHT = 8;
const CANARY = /cnry[a-z]+[0-9a-f]{8}/g;

// ---- The read table of docs/rules.md, restated: what each purpose grants (an oracle, not the code under test). ----
type Intent = 'current' | 'history' | 'as-of';
interface OracleGrant {
  role: Role;
  sensitivities: string[];
  tenantWide: boolean;
  /** A duty read sees every status short of erasure; otherwise the intent's statuses. */
  duty: boolean;
  readsHeld: boolean;
}
const ALL = ['public', 'internal', 'confidential', 'special'];
const AGENT: OracleGrant = {
  role: 'agent',
  sensitivities: ALL.slice(0, 3),
  tenantWide: false,
  duty: false,
  readsHeld: false,
};
const GRANTS: Record<string, OracleGrant> = {
  support: AGENT,
  'customer-support': AGENT,
  personalisation: AGENT,
  review: { role: 'reviewer', sensitivities: ALL, tenantWide: true, duty: true, readsHeld: false },
  erasure: { role: 'dpo', sensitivities: ALL, tenantWide: true, duty: true, readsHeld: false },
  'access-request': { role: 'dpo', sensitivities: ALL, tenantWide: true, duty: true, readsHeld: false },
  'legal-hold': { role: 'legal', sensitivities: ALL, tenantWide: true, duty: true, readsHeld: true },
  operations: { role: 'admin', sensitivities: ALL.slice(0, 2), tenantWide: true, duty: false, readsHeld: false },
};
/** The auditor's duty (`audit`) grants no content at all. */
const DUTY: Record<Role, string> = {
  agent: 'support',
  reviewer: 'review',
  dpo: 'erasure',
  legal: 'legal-hold',
  admin: 'operations',
  auditor: 'audit',
};
const INTENT_STATUSES: Record<Intent, string[]> = {
  current: ['active', 'disputed'],
  history: ['active', 'disputed', 'superseded'],
  'as-of': ['active', 'disputed', 'superseded'],
};
const AS_OF = '2024-06-01T00:00:00Z';

interface Stored {
  canary: string;
  kind: 'memory' | 'event';
  id: string;
  scope: string | undefined;
  sensitivity: string;
  status: string;
  held: boolean;
  validFrom?: Date;
  validTo?: Date | null;
}

/** A read by id that names no intent: `current` for a context grant, `history` for a duty. */
const BY_ID_DEFAULT = 'by-id-default';

function mayRead(
  r: Stored,
  who: { principal: string; roles: Role[] },
  purpose: string | undefined,
  asked: Intent | typeof BY_ID_DEFAULT,
): boolean {
  const purposes = purpose !== undefined ? [purpose] : who.roles.map((role) => DUTY[role]);
  return purposes.some((p) => {
    const g = GRANTS[p];
    if (!g || !who.roles.includes(g.role)) return false;
    const intent: Intent = asked === BY_ID_DEFAULT ? (g.duty ? 'history' : 'current') : asked;
    if (!g.sensitivities.includes(r.sensitivity)) return false;
    if (!g.tenantWide && r.scope !== `principal:${who.principal}` && r.scope !== 'tenant') return false;
    if (r.held && !g.readsHeld) return false;
    if (r.status === 'deleted' || r.status === 'purged') return false;
    if (r.kind === 'event') return true;
    if (!g.duty && !INTENT_STATUSES[intent].includes(r.status)) return false;
    const to = r.validTo ? r.validTo.getTime() : Infinity;
    if (intent === 'current') return Date.now() < to;
    if (intent === 'as-of') return r.validFrom!.getTime() <= Date.parse(AS_OF) && Date.parse(AS_OF) < to;
    return true;
  });
}

interface Caller {
  name: string;
  principal: string;
  roles: Role[];
  /** A token of another tenant, aimed at this one. */
  foreign?: boolean;
}
const CALLERS: Caller[] = [
  { name: 'agent ann', principal: 'p-ann', roles: ['agent'] },
  { name: 'agent ben', principal: 'p-ben', roles: ['agent'] },
  { name: 'agent eve', principal: 'p-eve', roles: ['agent'] },
  { name: 'reviewer', principal: 'rita', roles: ['reviewer'] },
  { name: 'dpo', principal: 'dora', roles: ['dpo'] },
  { name: 'legal', principal: 'lena', roles: ['legal'] },
  { name: 'admin', principal: 'adam', roles: ['admin'] },
  { name: 'auditor', principal: 'audrey', roles: ['auditor'] },
  { name: 'agent+admin', principal: 'p-ann', roles: ['agent', 'admin'] },
  { name: 'agent+auditor', principal: 'p-ben', roles: ['agent', 'auditor'] },
  { name: 'reviewer+legal', principal: 'rita', roles: ['reviewer', 'legal'] },
  { name: 'dpo+admin', principal: 'dora', roles: ['dpo', 'admin'] },
  { name: 'agent+reviewer', principal: 'p-cat', roles: ['agent', 'reviewer'] },
  { name: 'other tenant', principal: 'p-ann', roles: ['agent', 'dpo', 'auditor'], foreign: true },
];

/**
 * Routes whose calls would change the fixture (decide a sign-off, place or release a hold, file an erasure) get
 * only calls refused before they act: their bodies are always malformed, and the routes that take no body (a
 * release, a retry) are only ever aimed at ids that are not this tenant's.
 */
const NO_BODY = /\/(release|retry)$/;

describe('every route under a red team', () => {
  let app: TestApp;
  let tenant: string;
  let other: string;
  const tokens = new Map<string, string>();
  const stored: Stored[] = [];
  const pools = {
    own: [] as string[],
    memories: [] as string[],
    events: [] as string[],
    candidates: [] as string[],
    foreign: [] as string[],
    disputes: [] as string[],
    requests: [] as string[],
    holds: [] as string[],
    certificates: [] as string[],
    retrievals: [] as string[],
  };
  const terms: string[] = [];

  const canary = (tag: string) => `cnry${tag}${randomUUID().replace(/-/g, '').slice(0, 8)}`;
  async function write(t: string, principal: string, events: object[], memories: object[]) {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${t}/batches`,
      token: await app.token(t, ['agent'], principal),
      payload: { events, memories },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ events: { id: string }[]; memories: { id: string; status: string }[] }>();
  }
  /** One event and one memory about `subject`, each with its own canary and the route's search term. */
  const pair = (
    term: string,
    subject: string,
    over: Record<string, unknown> = {},
    eventOver: Record<string, unknown> = {},
  ) => {
    // The memory states what its event says (the derivation audit admits it), and the event has a canary of its
    // own: a canary found in a response says which of the two it came from, or that it came from either.
    const said = `${term} depot note ${canary('m')}.`;
    return {
      event: sampleEvent({ subjects: [subject], content: `${said} Call reference ${canary('e')}.`, ...eventOver }),
      memory: sampleMemory({
        subjects: [subject],
        kind: 'note',
        attribute: `note-${randomUUID().slice(0, 6)}`,
        content: said,
        ...over,
      }),
    };
  };
  async function writePairs(t: string, principal: string, pairs: ReturnType<typeof pair>[]) {
    const written = await write(
      t,
      principal,
      pairs.map((p) => p.event),
      pairs.map((p, i) => ({
        ...p.memory,
        provenance: { eventIds: [`#${i}`], parentIds: [], derivationRule: 'extract-note' },
      })),
    );
    return written;
  }

  beforeAll(async () => {
    app = await startTestApp();
    tenant = uniqueTenant();
    other = uniqueTenant();
    const term = (t: string) => {
      const word = `${t}${randomUUID().slice(0, 4)}`;
      terms.push(word);
      return word;
    };
    // Each principal's own records, shared ones, every sensitivity, a fact whose valid time ended.
    for (const principal of ['p-ann', 'p-ben', 'p-cat']) {
      const t = term(principal.slice(2));
      await writePairs(tenant, principal, [
        pair(t, 'subject-a'),
        pair(t, 'subject-a', { scope: 'tenant' }, { scope: 'tenant' }),
        pair(t, 'subject-a', { sensitivity: 'confidential' }, { sensitivity: 'confidential' }),
        pair(t, 'subject-a', { sensitivity: 'public' }),
        pair(t, 'subject-a', { validFrom: '2024-01-01T00:00:00Z', validTo: '2025-01-01T00:00:00Z' }),
        pair(t, 'subject-a', { validFrom: '2025-02-01T00:00:00Z', validTo: '2025-03-01T00:00:00Z', scope: 'tenant' }),
      ]);
    }
    // Special-category and HR records wait for sign-off: one approved (active), one left a candidate.
    const sensitive = term('sens');
    const waiting = await writePairs(tenant, 'p-ann', [
      pair(sensitive, 'subject-a', { sensitivity: 'special' }, { sensitivity: 'special' }),
      pair(sensitive, 'subject-a', { namespace: 'hr', kind: 'fact', attribute: 'salary' }),
    ]);
    expect(waiting.memories.map((m) => m.status)).toEqual(['candidate', 'candidate']);
    const approved = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/review-queue/${waiting.memories[0]!.id}/decision`,
      token: await app.token(tenant, ['reviewer'], 'rita-2'),
      payload: { decision: 'approve', reason: 'stated by the customer' },
    });
    expect(approved.statusCode, approved.body).toBe(200);
    // Deleted before its purge (an erasure between its marking and its purge).
    const doomed = await writePairs(tenant, 'p-ann', [pair(term('del'), 'subject-a')]);
    expect(
      await app.services.memories.transition(tenant, doomed.memories[0]!.id, 'active', 'deleted', 'test:red-team'),
    ).toBe(true);
    expect(
      await app.services.events.markDeleted(
        tenant,
        doomed.events.map((e) => e.id),
      ),
    ).toBe(1);
    // A dispute between two agents' facts.
    const facts = term('fact');
    const employer = (content: string, validFrom: string) =>
      sampleMemory({ subjects: ['subject-d'], kind: 'fact', attribute: 'employer', content, validFrom });
    const acme = `${facts} works at Acme; reference ${canary('m')}.`;
    const globex = `${facts} works at Globex; reference ${canary('m')}.`;
    await write(
      tenant,
      'p-ann',
      [sampleEvent({ subjects: ['subject-d'], content: acme })],
      [employer(acme, '2024-01-01T00:00:00Z')],
    );
    const disputed = await write(
      tenant,
      'p-ben',
      [sampleEvent({ subjects: ['subject-d'], content: globex })],
      [employer(globex, '2025-06-01T00:00:00Z')],
    );
    expect(disputed.memories[0]!.status).toBe('disputed');
    pools.disputes.push(
      ...[...(await app.services.disputes.openForMany(tenant, [disputed.memories[0]!.id])).values()]
        .flat()
        .map((d) => d._id),
    );
    // A hold that met an erasure: the subject's held records stay (restricted), the rest is erased.
    const heldTerm = term('held');
    const subject = await writePairs(tenant, 'p-ann', [pair(heldTerm, 'subject-h'), pair(heldTerm, 'subject-h')]);
    const held = [subject.memories[0]!.id, subject.events[0]!.id];
    const placed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/legal-holds`,
      token: await app.token(tenant, ['legal'], 'lena'),
      payload: { scope: { recordIds: held }, caseRef: 'case-red-team' },
    });
    expect(placed.statusCode, placed.body).toBe(201);
    pools.holds.push(placed.json<{ id: string }>().id);
    const requestId = await fileErasure(app, tenant, { subjectId: 'subject-h' });
    pools.requests.push(requestId);
    expect(
      (await waitForState(app, tenant, requestId, ['partial', 'completed', 'needs-operator', 'rejected'])).state,
    ).toBe('partial');
    // Another tenant's records, found by the same terms.
    const foreign = await writePairs(other, 'p-ann', [
      pair(terms[0]!, 'subject-a', { scope: 'tenant' }),
      pair(heldTerm, 'subject-a'),
    ]);
    pools.foreign.push(...foreign.events.map((e) => e.id), ...foreign.memories.map((m) => m.id));

    // What is stored now, read straight from MongoDB (content opened under each row's data key): the oracle's input.
    const memories = await app.runtime.cipher.openAll(
      await withStoredMarks(
        app.runtime.db,
        await app.runtime.db.collection<MemoryRecord>(Collections.memories).find({ tenant }).toArray(),
      ),
    );
    const events = await app.runtime.cipher.openAll(
      await withStoredMarks(
        app.runtime.db,
        await app.runtime.db.collection<EventRecord>(Collections.events).find({ tenant }).toArray(),
      ),
    );
    for (const m of memories)
      for (const c of m.content.match(CANARY) ?? [])
        stored.push({
          canary: c,
          kind: 'memory',
          id: m._id,
          scope: m.scope,
          sensitivity: m.policy.sensitivity,
          status: m.status,
          held: (m.restrictedBy?.length ?? 0) > 0,
          validFrom: m.validFrom,
          validTo: m.validTo,
        });
    for (const e of events)
      for (const c of e.content.match(CANARY) ?? [])
        stored.push({
          canary: c,
          kind: 'event',
          id: e._id,
          scope: e.scope ?? `principal:${e.recordedBy}`,
          sensitivity: e.sensitivity,
          status: e.deleted ? 'deleted' : 'active',
          held: (e.restrictedBy?.length ?? 0) > 0,
        });
    const erased = [...subject.memories.slice(1).map((m) => m.id), subject.events[1]!.id];
    pools.memories.push(...memories.map((m) => m._id), ...erased.filter((i) => i.startsWith('mem_')));
    pools.events.push(...events.map((e) => e._id), ...erased.filter((i) => i.startsWith('evt_')));
    pools.candidates.push(...memories.filter((m) => m.status === 'candidate').map((m) => m._id));
    pools.own.push(...pools.memories, ...pools.events);
    pools.certificates.push(
      ...(await app.services.certificates.byRequest(tenant, requestId)).map((c) => c.certificateId),
    );
    const retrieved = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/retrieve`,
      token: await app.token(tenant, ['agent'], 'p-ann'),
      payload: { query: terms[0] },
    });
    pools.retrievals.push(retrieved.json<{ retrievalId: string }>().retrievalId);
    expect(pools.candidates.length).toBeGreaterThan(0);
    expect(pools.certificates.length).toBeGreaterThan(0);
    expect(new Set(stored.filter((s) => s.held).map((s) => s.id)).size).toBe(2);
    for (const caller of CALLERS)
      tokens.set(caller.name, await app.token(caller.foreign ? other : tenant, caller.roles, caller.principal, 3600));
  }, 300_000);

  afterAll(async () => {
    await app?.close();
  });

  it(`serves no caller a canary it may not read, over ${CALLS} calls to every route`, async () => {
    const spec = (await app.request({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, unknown>>;
    }>();
    const routes = Object.entries(spec.paths)
      .filter(([path]) => path.startsWith('/v1/tenants/'))
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })));
    expect(routes.length).toBeGreaterThanOrEqual(25);

    // Every canary the tenant ever held, erased ones included (they are in no stored record: nobody may read them).
    const allCanaries = new Set<string>(stored.map((s) => s.canary));
    const everWritten = await app.runtime.db.collection(Collections.audit).countDocuments({ tenant });
    expect(everWritten).toBeGreaterThan(0);

    const READING = /\/(memories|events)\/\{id\}$|\/(search|retrieve)$/;
    const weighted = routes.flatMap((r) =>
      r.method !== 'GET' || !READING.test(r.path) ? (READING.test(r.path) ? [r, r, r, r] : [r]) : [r, r, r, r],
    );
    /** The ids a route takes, by the kind its path names. */
    const poolOf = (path: string): string[] =>
      path.includes('/memories/{id}')
        ? pools.memories
        : path.includes('/events/{id}')
          ? pools.events
          : path.includes('/review-queue/{id}')
            ? [...pools.candidates, ...pools.candidates, ...pools.memories]
            : path.includes('/disputes/{id}')
              ? pools.disputes
              : path.includes('/erasure-requests/{id}')
                ? pools.requests
                : path.includes('/legal-holds/{id}')
                  ? pools.holds
                  : path.includes('/certificates/{id}')
                    ? pools.certificates
                    : path.includes('/retrievals/{id}')
                      ? pools.retrievals
                      : pools.own;
    const id = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...pools.own) },
      { weight: 2, arbitrary: fc.constantFrom(...pools.foreign) },
      { weight: 1, arbitrary: fc.constantFrom(...pools.disputes, ...pools.requests, ...pools.holds) },
      { weight: 1, arbitrary: fc.constantFrom('mem_0', 'evt_0', '..%2F..%2Fmemories', '%2A', 'rtv_x', 'cert_0') },
    );
    const purpose = fc.oneof(
      { weight: 8, arbitrary: fc.constant(undefined) },
      {
        weight: 7,
        arbitrary: fc.constantFrom(
          'support',
          'review',
          'erasure',
          'access-request',
          'legal-hold',
          'operations',
          'audit',
          'marketing',
        ),
      },
    );
    const intent = fc.constantFrom<Intent | undefined>(undefined, 'current', 'history', 'as-of');
    const call = fc.record({
      route: fc.constantFrom(...weighted),
      fromPool: fc.integer({ min: 0, max: 9 }),
      pick: fc.nat(),
      caller: fc.constantFrom(...CALLERS),
      id,
      purpose,
      intent,
      term: fc.constantFrom(...terms, '*', '{"match_all":{}}', 'depot'),
      k: fc.integer({ min: 1, max: 50 }),
      odd: fc.constantFrom(false, false, false, true),
    });
    const calls = fc.sample(call, { numRuns: CALLS, seed: 2424 });

    const allowedCache = new Map<string, Set<string>>();
    const allowed = (caller: Caller, p: string | undefined, i: Intent | typeof BY_ID_DEFAULT) => {
      const key = `${caller.name}|${p}|${i}`;
      let set = allowedCache.get(key);
      if (!set) {
        set = new Set(caller.foreign ? [] : stored.filter((s) => mayRead(s, caller, p, i)).map((s) => s.canary));
        allowedCache.set(key, set);
      }
      return set;
    };

    const leaks: string[] = [];
    /** Leaks by what leaked: the record's kind, whose it is, its sensitivity and lifecycle. */
    const kinds = new Map<string, number>();
    const byRoute = new Map<string, { calls: number; ok: number; leaks: number }>();
    const statuses = new Map<number, number>();
    let next = 0;
    let scanned = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (;;) {
          const c = calls[next++];
          if (!c) return;
          const { method, path } = c.route;
          // Seven calls in ten name an id of the kind the route takes; the rest any id at all.
          const pool = poolOf(path);
          const chosen = c.fromPool < 7 && pool.length > 0 ? pool[c.pick % pool.length]! : c.id;
          const targetId =
            method !== 'GET' && NO_BODY.test(path) && !pools.foreign.includes(chosen) ? 'hold_0' : chosen;
          const urlPath = path
            .replace('{tenant}', tenant)
            .replace('{id}', encodeURIComponent(targetId).replace(/%25/g, '%'));
          const params = new URLSearchParams();
          if (method === 'GET' && path.endsWith('/memories/{id}')) {
            if (c.purpose) params.set('purpose', c.purpose);
            if (c.intent) params.set('intent', c.intent);
            if (c.intent === 'as-of') params.set('asOf', AS_OF);
          } else if (method === 'GET' && path.endsWith('/events/{id}') && c.purpose) params.set('purpose', c.purpose);
          else if (c.odd) params.set('purpose', c.purpose ?? 'x');
          const search = /\/(search|retrieve)$/.test(path);
          const payload =
            method === 'GET'
              ? undefined
              : search
                ? {
                    query: c.term,
                    k: c.k,
                    ...(c.intent ? { intent: c.intent } : {}),
                    ...(c.intent === 'as-of' ? { asOf: AS_OF } : {}),
                    ...(c.purpose ? { purpose: c.purpose } : {}),
                    ...(c.odd ? { scope: 'tenant' } : {}),
                  }
                : path.endsWith('/exposures')
                  ? { memoryIds: [pools.memories[c.pick % pools.memories.length]!] }
                  : c.odd
                    ? { decision: 'approve', reason: 'red team', outcome: 'keep-both', months: 1 }
                    : { bogus: c.term };
          // Admin's re-embedding takes no body: the red team does not start one.
          const caller =
            path.endsWith('/reembed') && method === 'POST' && c.caller.roles.includes('admin') ? CALLERS[0]! : c.caller;
          const response = await app.request({
            method: method as 'GET' | 'POST',
            url: `${urlPath}${params.size > 0 ? `?${params}` : ''}`,
            token: tokens.get(caller.name)!,
            ...(payload ? { payload } : {}),
          });
          scanned++;
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
          const tally = byRoute.get(`${method} ${path}`) ?? { calls: 0, ok: 0, leaks: 0 };
          tally.calls++;
          if (response.statusCode < 300) tally.ok++;
          byRoute.set(`${method} ${path}`, tally);
          expect(response.statusCode, `${method} ${urlPath}: ${response.body.slice(0, 200)}`).toBeLessThan(500);
          const found = response.body.match(CANARY);
          if (!found) continue;
          // Intent as the route reads it: a memory by id, current for a context grant and history for a duty unless
          // named; search and retrieval, current unless named; other routes, history.
          const routeIntent: Intent | typeof BY_ID_DEFAULT =
            c.intent && (search || path.endsWith('/memories/{id}'))
              ? c.intent
              : search
                ? 'current'
                : path.endsWith('/memories/{id}')
                  ? BY_ID_DEFAULT
                  : 'history';
          const declared = search || /\/(memories|events)\/\{id\}$/.test(path) ? c.purpose : undefined;
          const may = allowed(caller, declared, routeIntent);
          for (const canary of new Set(found)) {
            if (may.has(canary)) continue;
            tally.leaks++;
            const what = stored.find((s) => s.canary === canary);
            const whose = !what
              ? ''
              : what.scope === 'tenant'
                ? 'shared'
                : what.scope === `principal:${caller.principal}`
                  ? 'own'
                  : "another's";
            const record = what
              ? `${what.kind} ${whose} ${what.sensitivity} ${what.status}${what.held ? ' held' : ''}${what.validTo && what.validTo.getTime() <= Date.now() ? ' ended' : ''}`
              : allCanaries.has(canary)
                ? 'stored'
                : 'erased or another tenant';
            kinds.set(record, (kinds.get(record) ?? 0) + 1);
            leaks.push(`${caller.name} ${method} ${path} purpose=${declared} intent=${routeIntent} → ${record}`);
          }
        }
      }),
    );

    // Every content read was traced: retrievals recorded by the route they took, and the ids they handed out.
    const traced = new Map<string, { reads: number; ids: number }>();
    for await (const r of app.runtime.db
      .collection<{ route?: string; returned: number }>(Collections.retrievals)
      .find({ tenant }, { projection: { route: 1, returned: 1 } })) {
      const t = traced.get(r.route ?? 'retrieve') ?? { reads: 0, ids: 0 };
      t.reads++;
      t.ids += r.returned;
      traced.set(r.route ?? 'retrieve', t);
    }
    console.log(`exposure records by route: ${JSON.stringify(Object.fromEntries(traced))}`);
    for (const route of ['search', 'retrieve', 'memory', 'event'])
      expect(traced.get(route)?.ids ?? 0, route).toBeGreaterThan(0);
    const table = [...byRoute.entries()]
      .sort()
      .map(
        ([route, t]) =>
          `${route.padEnd(64)} ${String(t.calls).padStart(5)} calls ${String(t.ok).padStart(5)} 2xx ${t.leaks} leaks`,
      );
    console.log(
      `read red team: ${scanned} calls over ${byRoute.size} routes, ${leaks.length} leaks\n${table.join('\n')}\nstatuses: ${JSON.stringify(Object.fromEntries(statuses))}\nleaked: ${JSON.stringify(Object.fromEntries(kinds), null, 1)}`,
    );
    expect(leaks.slice(0, 20)).toEqual([]);
    // Every route was tried, and the reading routes did serve content: a red team that read nothing proves nothing.
    for (const r of routes)
      expect(byRoute.get(`${r.method} ${r.path}`)?.calls ?? 0, `${r.method} ${r.path}`).toBeGreaterThan(0);
    for (const reading of [
      'GET /v1/tenants/{tenant}/memories/{id}',
      'GET /v1/tenants/{tenant}/events/{id}',
      'POST /v1/tenants/{tenant}/search',
      'POST /v1/tenants/{tenant}/retrieve',
    ])
      expect(byRoute.get(reading)?.ok ?? 0, reading).toBeGreaterThan(CALLS / routes.length / 10);
  }, 3_600_000);
});
