/**
 * A red team against retrieval: generated adversarial calls through the API — other principals'
 * distinctive terms, another tenant's ids and terms, query text shaped like query DSL, purposes the role does not
 * hold, huge k, empty, oversize and malformed input. Every record returned must be in the caller's admissible set,
 * computed here from MongoDB independently of the code under test; every malformed call must get a 4xx naming
 * the field. `LETHE_REDTEAM_CALLS` changes the number of calls: `npm test` makes 3 000 of them, `npm run test:red-team`
 * the full 10 000.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { ordinalWord, sampleEvent, sampleMemory, statedBatch } from '../../support/samples.js';
import { withStoredMarks } from '../../support/stored-marks.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';

/** C0 controls other than tab, LF and CR, and DEL: the API refuses them (tested with the bad input below). */
const hasControl = (s: string) => [...s].some((c) => (c < ' ' && !'\t\n\r'.includes(c)) || c === '\u007f');

const CALLS = Number(process.env.LETHE_REDTEAM_CALLS ?? 3_000);
const IN_FLIGHT = 8;
const PRINCIPALS = ['p-ana', 'p-ben', 'p-cai', 'p-dia'];

describe('retrieval under a red team', () => {
  let app: TestApp;
  let tenant: string;
  let other: string;
  /** Each principal's distinctive terms, and the other tenant's. */
  const terms = new Map<string, string>();
  let otherIds: string[] = [];
  const held: string[] = [];
  const deleted: string[] = [];
  const tokens = new Map<string, string>();

  const write = async (t: string, principal: string, memories: object[]) => {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${t}/batches`,
      token: await app.token(t, ['agent'], principal),
      // Each memory cites an event that states it: the derivation audit admits them as written.
      payload: statedBatch(memories as Record<string, unknown>[], [
        sampleEvent({ subjects: ['customer-x'], content: `notes of ${principal}` }),
      ]),
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ memories: { id: string }[] }>().memories.map((m) => m.id);
  };
  const note = (i: number, term: string, over: Record<string, unknown> = {}) =>
    sampleMemory({
      subjects: [`customer-${i % 5}`],
      attribute: `note-${term}-${i}`,
      kind: 'note',
      content: `${term} shipment ${ordinalWord(i)} depot invoice contact`,
      ...over,
    });

  beforeAll(async () => {
    // Budgets above the red team's own volume (10 000 calls a minute into one tenant at full size): it probes what
    // retrieval serves, and a 429 would hide that. The budgets have tests of their own (`rate-limits.test.ts`).
    app = await startTestApp({
      config: {
        LETHE_RATE_LIMIT_PER_PRINCIPAL: '1000000',
        LETHE_RATE_LIMIT_PER_TENANT: '10000000',
        LETHE_RATE_LIMIT_PER_ADDRESS: '1000000',
      },
    });
    tenant = uniqueTenant();
    other = uniqueTenant();
    for (const principal of PRINCIPALS) {
      const term = `${principal.slice(2)}${randomUUID().slice(0, 6)}`;
      terms.set(principal, term);
      const ids = await write(tenant, principal, [
        ...Array.from({ length: 12 }, (_, i) => note(i, term)),
        note(12, term, { scope: 'tenant' }),
        note(13, term, { sensitivity: 'special' }),
        note(14, term, { validFrom: '2024-01-01T00:00:00Z', validTo: '2025-01-01T00:00:00Z' }),
      ]);
      held.push(ids[0]!);
      deleted.push(ids[1]!);
      await app.services.memories.transition(tenant, ids[2]!, 'active', 'superseded', 'test:red-team');
    }
    await app.services.memories.restrict(tenant, held, `hold_${randomUUID()}`);
    for (const id of deleted) await app.services.memories.transition(tenant, id, 'active', 'deleted', 'test:red-team');
    const otherTerm = `zed${randomUUID().slice(0, 6)}`;
    terms.set('other-tenant', otherTerm);
    otherIds = await write(
      other,
      'p-ana',
      Array.from({ length: 8 }, (_, i) => note(i, otherTerm, { scope: 'tenant' })),
    );
    for (const principal of [...PRINCIPALS, 'p-eve'])
      tokens.set(principal, await app.token(tenant, ['agent'], principal, 3600));
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  });

  /** Who may see what, from the stored records and the rules as docs/rules.md states them, not from the code. */
  async function admissibleFor(principal: string, intent: string, asOf?: string): Promise<Set<string>> {
    const records = await withStoredMarks(
      app.runtime.db,
      await app.runtime.db.collection<MemoryRecord>(Collections.memories).find({ tenant }).toArray(),
    );
    const statuses = intent === 'current' ? ['active', 'disputed'] : ['active', 'disputed', 'superseded'];
    return new Set(
      records
        .filter(
          (r) =>
            (r.scope === `principal:${principal}` || r.scope === 'tenant') &&
            statuses.includes(r.status) &&
            (r.restrictedBy?.length ?? 0) === 0 &&
            r.policy.sensitivity !== 'special' &&
            // A current question never gets a fact whose valid time has ended.
            (intent !== 'current' || !r.validTo || r.validTo.getTime() > Date.now()) &&
            (!asOf ||
              (r.validFrom.getTime() <= Date.parse(asOf) && (!r.validTo || Date.parse(asOf) < r.validTo.getTime()))),
        )
        .map((r) => r._id),
    );
  }

  it(`returns nothing outside the caller's admissible set over ${CALLS} adversarial retrievals`, async () => {
    const principal = fc.constantFrom(...PRINCIPALS, 'p-eve');
    const foreignText = fc.oneof(
      fc.constantFrom(...terms.values()).map((t) => `${t} shipment depot`),
      fc.constantFrom(...otherIds, ...held, ...deleted),
      fc.constantFrom(
        '{"match_all":{}}',
        '*',
        'status:deleted OR status:purged',
        'scope:principal:p-ben',
        '_id:* AND tenant:*',
        '") OR 1=1 --',
        '{"bool":{"must_not":[{"term":{"scope":"tenant"}}]}}',
        'invoice\u200b contact\u202e depot',
      ),
      fc.string({ minLength: 1, maxLength: 64 }).filter((s) => s.trim() !== '' && !hasControl(s)),
    );
    const valid = fc.record({
      principal,
      query: foreignText,
      k: fc.integer({ min: 1, max: 20 }),
      intent: fc.constantFrom('current', 'history', 'as-of'),
      purpose: fc.constantFrom(undefined, 'support', 'personalisation', 'customer-support'),
      budgetTokens: fc.integer({ min: 1, max: 5000 }),
    });
    const bad = fc.constantFrom<[object, string]>(
      [{ query: '' }, 'query'],
      [{ query: 'x'.repeat(3000) }, 'query'],
      [{ query: { match_all: {} } }, 'query'],
      [{ query: 'depot', k: 1_000_000 }, 'k'],
      [{ query: 'depot', k: -1 }, 'k'],
      [{ query: 'depot', k: 2.5 }, 'k'],
      [{ query: 'depot', budgetTokens: 0 }, 'budgetTokens'],
      [{ query: 'depot', intent: 'as-of' }, 'asOf'],
      [{ query: 'depot', intent: 'forever' }, 'intent'],
      [{ query: 'depot', namespaces: [] }, 'namespaces'],
      [{ query: 'depot\u0000' }, 'query'],
      [{ query: 'depot', tenant: 'other' }, ''],
    );
    const calls = fc.sample(
      fc.oneof({ weight: 9, arbitrary: valid.map((v) => ({ v })) }, { weight: 1, arbitrary: bad.map((b) => ({ b })) }),
      {
        numRuns: CALLS,
        seed: 4242,
      },
    );

    const admissible = new Map<string, Set<string>>();
    const AS_OF = '2024-06-01T00:00:00Z';
    for (const p of [...PRINCIPALS, 'p-eve'])
      for (const intent of ['current', 'history', 'as-of'])
        admissible.set(`${p}:${intent}`, await admissibleFor(p, intent, intent === 'as-of' ? AS_OF : undefined));

    let outside = 0;
    let wrongStatus = 0;
    let served = 0;
    let refusedBad = 0;
    let next = 0;
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (;;) {
          const call = calls[next++];
          if (!call) return;
          if ('b' in call) {
            const [body, field] = call.b;
            const response = await app.request({
              method: 'POST',
              url: `/v1/tenants/${tenant}/retrieve`,
              token: tokens.get('p-ana')!,
              payload: body,
            });
            if (
              response.statusCode !== 400 ||
              (field && response.json<{ error: { field: string } }>().error.field !== field)
            )
              failures.push(
                `${JSON.stringify(body).slice(0, 80)} → ${response.statusCode} ${response.body.slice(0, 120)}`,
              );
            else refusedBad++;
            continue;
          }
          const { principal: p, purpose, ...rest } = call.v;
          const response = await app.request({
            method: 'POST',
            url: `/v1/tenants/${tenant}/retrieve`,
            token: tokens.get(p)!,
            payload: { ...rest, ...(purpose ? { purpose } : {}), ...(rest.intent === 'as-of' ? { asOf: AS_OF } : {}) },
          });
          if (response.statusCode !== 200) {
            failures.push(
              `${JSON.stringify(call.v).slice(0, 80)} → ${response.statusCode} ${response.body.slice(0, 120)}`,
            );
            continue;
          }
          const allowed = admissible.get(`${p}:${rest.intent}`)!;
          for (const item of response.json<{ items: { id: string; status: string }[] }>().items) {
            served++;
            if (!allowed.has(item.id)) outside++;
            if (item.status === 'deleted' || item.status === 'purged') wrongStatus++;
          }
        }
      }),
    );
    expect(failures.slice(0, 5)).toEqual([]);
    expect({ outside, wrongStatus }).toEqual({ outside: 0, wrongStatus: 0 });
    // The red team did reach the index: a check that served nothing would prove nothing.
    expect(served).toBeGreaterThan(CALLS);
    expect(refusedBad).toBeGreaterThan(CALLS / 20);
    console.log(
      `red team: ${CALLS} calls, ${served} items served, 0 outside the admissible set, ${refusedBad} malformed refused`,
    );
  }, 1_800_000);
});
