/**
 * Art. 15(4): an access package answers for the subject the request names and must not adversely affect the rights
 * of others. Alice's records share lineage with Bob's: a summary derived from hers that is about Bob only, and a
 * record about both. Bob's records carry a canary; no package filed for Alice holds it, nor Bob's subject id,
 * whatever the selector's kind. What is kept back is listed, marked and counted for the DPO.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import type { AccessPackage, PackagedRecord } from '../../../src/governance/rights/access-request.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';

/** Selectors that name no subject, each reaching every record the test writes (`since`: before the first). */
const TIME_SELECTORS = [
  ['validTime', () => ({ validTime: { from: '2026-10-01T00:00:00Z', to: '2026-12-01T00:00:00Z' } })],
  ['transactionTime', (since: string) => ({ transactionTime: { from: since, to: '2100-01-01T00:00:00Z' } })],
] as const;

interface AccessView {
  id: string;
  state: string;
}

describe("an access package for one subject of records shared with another's", () => {
  let app: TestApp;
  const tenant = uniqueTenant();
  const alice = `alice-${randomUUID().slice(0, 8)}`;
  const bob = `bob-${randomUUID().slice(0, 8)}`;
  const aliceCanary = `zalice${randomUUID().replaceAll('-', '')}`;
  const bobCanary = `zbob${randomUUID().replaceAll('-', '')}`;
  const startedAt = new Date(Date.now() - 60_000).toISOString();
  let ids: {
    aliceEvents: string[];
    aliceMemory: string;
    bobEvent: string;
    bobMemory: string;
    /** Derived from Alice's memory and Bob's, tagged with Bob only. */
    aboutBob: string;
    /** Derived from both, tagged with both. */
    aboutBoth: string;
  };

  const write = async (body: object) => {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], 'writer'),
      payload: body,
    });
    expect(response.statusCode, response.body).toBe(201);
    const written = response.json<{ events: { id: string }[]; memories: { id: string; status: string }[] }>();
    for (const m of written.memories) expect(m.status, JSON.stringify(m)).toBe('active');
    return written;
  };

  /** Files an access request as the DPO, waits for its package and downloads it (body as text and parsed). */
  const base = () => `/v1/tenants/${tenant}/subject-rights/access`;
  /** Files an access request as the DPO. */
  const fileAccess = async (payload: object) =>
    app.request({ method: 'POST', url: base(), token: await app.token(tenant, ['dpo'], 'dora'), payload });

  const packageFor = async (filing: object): Promise<{ text: string; pkg: AccessPackage }> => {
    const token = await app.token(tenant, ['dpo'], 'dora');
    const filed = await fileAccess({ ...filing, requestKey: `acc-${randomUUID()}` });
    expect(filed.statusCode, filed.body).toBe(202);
    const id = filed.json<AccessView>().id;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const view = (await app.request({ method: 'GET', url: `${base()}/${id}`, token })).json<AccessView>();
      if (view.state === 'ready') break;
      if (view.state === 'failed' || Date.now() > deadline) throw new Error(`access ${id} is ${view.state}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const downloaded = await app.request({ method: 'GET', url: `${base()}/${id}/package`, token });
    expect(downloaded.statusCode, downloaded.body).toBe(200);
    return { text: downloaded.body, pkg: downloaded.json<AccessPackage>() };
  };

  const record = (pkg: AccessPackage, id: string): PackagedRecord => {
    const found = pkg.records.find((r) => r.id === id);
    expect(found, id).toBeDefined();
    return found!;
  };

  /** Nothing of Bob: neither what his records say nor his id. */
  const expectNothingOfBob = (text: string) => {
    expect(text).not.toContain(bobCanary);
    expect(text).not.toContain(bob);
  };

  const expectWithheld = (pkg: AccessPackage, id: string) =>
    expect(record(pkg, id)).toMatchObject({ content: null, subjects: [], withheld: 'about-others' });

  beforeAll(async () => {
    app = await startTestApp();
    const base = await write({
      events: [
        sampleEvent({ subjects: [alice], content: `Alice told support her codeword is ${aliceCanary}.` }),
        sampleEvent({ subjects: [alice], content: 'Alice asked for invoices by e-mail.' }),
        sampleEvent({
          subjects: [bob],
          content: `Bob said his codeword is ${bobCanary}; he prefers phone calls in the afternoon.`,
        }),
      ],
      memories: [
        sampleMemory({
          subjects: [alice],
          attribute: 'invoice-channel',
          content: 'Alice wants invoices by e-mail.',
          provenance: { eventIds: ['#1'], parentIds: [], derivationRule: 'extract-preference' },
        }),
        sampleMemory({
          subjects: [bob],
          attribute: 'codeword',
          content: `Bob's codeword is ${bobCanary}.`,
          provenance: { eventIds: ['#2'], parentIds: [], derivationRule: 'extract-fact' },
        }),
      ],
    });
    const [aliceMemory, bobMemory] = base.memories.map((m) => m.id) as [string, string];
    const derived = await write({
      memories: [
        sampleMemory({
          subjects: [bob],
          kind: 'summary',
          attribute: 'contact-summary',
          content: `Contact summary: Alice wants invoices by e-mail; Bob's codeword is ${bobCanary}.`,
          confidence: 0.8,
          provenance: { eventIds: [], parentIds: [aliceMemory, bobMemory], derivationRule: 'summarise' },
        }),
        sampleMemory({
          subjects: [alice, bob],
          kind: 'summary',
          attribute: 'shared-contact',
          content: 'Shared contact: Alice wants invoices by e-mail.',
          confidence: 0.8,
          provenance: { eventIds: [], parentIds: [aliceMemory, bobMemory], derivationRule: 'summarise' },
        }),
      ],
    });
    const [aboutBob, aboutBoth] = derived.memories.map((m) => m.id) as [string, string];
    ids = {
      aliceEvents: base.events.slice(0, 2).map((e) => e.id),
      aliceMemory,
      bobEvent: base.events[2]!.id,
      bobMemory,
      aboutBob,
      aboutBoth,
    };
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });

  it("withholds a record derived from Alice's that is about Bob only, and gives the one about both naming Alice only", async () => {
    const { text, pkg } = await packageFor({ selector: { subjectId: alice } });
    expect(text).toContain(aliceCanary);
    expect(record(pkg, ids.aboutBob)).toMatchObject({ reach: 'derived' });
    expectWithheld(pkg, ids.aboutBob);
    expect(record(pkg, ids.aboutBoth)).toMatchObject({
      content: 'Shared contact: Alice wants invoices by e-mail.',
      subjects: [alice],
      otherSubjects: 1,
    });
    expect(record(pkg, ids.aliceMemory)).toMatchObject({
      subjects: [alice],
      content: 'Alice wants invoices by e-mail.',
    });
    expect(record(pkg, ids.aliceMemory).withheld).toBeUndefined();
    expect(pkg.counts.withheld).toBe(pkg.records.filter((r) => r.withheld === 'about-others').length);
    expect(pkg.counts.withheld).toBe(1);
    expectNothingOfBob(text);
  }, 180_000);

  it.each(TIME_SELECTORS)(
    'a %s selector with Alice as its subject withholds every record about Bob only',
    async (_kind, shape) => {
      const selector = shape(startedAt);
      const { text, pkg } = await packageFor({ selector, subjectId: alice });
      // The selector reaches Bob's own records as well as Alice's: they are listed, kept back and counted.
      for (const id of [ids.bobMemory, ids.aboutBob]) expectWithheld(pkg, id);
      expect(record(pkg, ids.aliceMemory)).toMatchObject({
        subjects: [alice],
        content: 'Alice wants invoices by e-mail.',
      });
      expect(record(pkg, ids.aboutBoth)).toMatchObject({ subjects: [alice], otherSubjects: 1 });
      expect(pkg.counts.withheld).toBe(pkg.records.filter((r) => r.withheld === 'about-others').length);
      expect(pkg.counts.withheld).toBeGreaterThanOrEqual(2);
      expectNothingOfBob(text);
    },
    180_000,
  );

  it.each(TIME_SELECTORS)(
    'a %s selector that names no subject withholds every record: the DPO sees ids and counts',
    async (_kind, shape) => {
      const selector = shape(startedAt);
      const { text, pkg } = await packageFor({ selector });
      expect(pkg.records.length).toBeGreaterThan(0);
      for (const r of pkg.records)
        expect(r, r.id).toMatchObject({ content: null, subjects: [], withheld: 'about-others' });
      expect(pkg.counts.withheld).toBe(pkg.records.length);
      expect(pkg.recipients).toEqual([]);
      expectNothingOfBob(text);
      expect(text).not.toContain(aliceCanary);
      expect(text).not.toContain(alice);
    },
    180_000,
  );

  it('refuses a filing whose subject is not the one its subject selector names', async () => {
    const filed = await fileAccess({
      selector: { subjectId: alice },
      subjectId: bob,
      requestKey: `acc-${randomUUID()}`,
    });
    expect(filed.statusCode, filed.body).toBe(400);
    expect(filed.json<{ error: { field: string } }>().error.field).toBe('subjectId');
  });

  it('refuses a subjectId with a NUL byte, a control character or 300 KB, naming the field, and files nothing', async () => {
    const before = await app.runtime.db.collection(Collections.accessRequests).countDocuments({ tenant });
    for (const subjectId of [`${alice}\u0000`, `a\u0007b`, 'x'.repeat(300_000), '']) {
      const filed = await fileAccess({
        selector: { validTime: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' } },
        subjectId,
        requestKey: `acc-${randomUUID()}`,
      });
      expect(filed.statusCode, filed.body.slice(0, 200)).toBe(400);
      expect(filed.body).toContain('subjectId');
      expect(filed.body).not.toMatch(/\bat \S+\.(ts|js):\d+/);
    }
    expect(await app.runtime.db.collection(Collections.accessRequests).countDocuments({ tenant })).toBe(before);
  });

  it('names one filing by its key: the same selector for another subject under it is refused, and nobody is named', async () => {
    const requestKey = `acc-${randomUUID()}`;
    const selector = TIME_SELECTORS[1][1](startedAt);
    const first = await fileAccess({ selector, subjectId: alice, requestKey });
    expect(first.statusCode, first.body).toBe(202);
    expect(first.body).not.toContain(alice);
    const again = await fileAccess({ selector, subjectId: alice, requestKey });
    expect(again.statusCode, again.body).toBe(200);
    const other = await fileAccess({ selector, subjectId: bob, requestKey });
    expect(other.statusCode, other.body).toBe(409);
    const stored = await app.runtime.db
      .collection<{ _id: string }>(Collections.accessRequests)
      .findOne({ _id: first.json<AccessView>().id });
    expect(JSON.stringify(stored)).not.toContain(alice);
  });

  it("counts in the preview as collateral exactly the derived records Alice's package withholds", async () => {
    const previewed = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/subject-rights/preview`,
      token: await app.token(tenant, ['dpo'], 'dora'),
      payload: { selector: { subjectId: alice } },
    });
    expect(previewed.statusCode, previewed.body).toBe(200);
    const preview = previewed.json<{ derived: { total: number; collateral: number } }>();
    const { pkg } = await packageFor({ selector: { subjectId: alice } });
    const derived = pkg.records.filter((r) => r.reach === 'derived');
    expect(preview.derived.total).toBe(derived.length);
    expect(preview.derived.collateral).toBe(derived.filter((r) => r.withheld === 'about-others').length);
    expect(preview.derived.collateral).toBe(1);
  }, 180_000);
});
