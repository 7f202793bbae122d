/**
 * A writer cites, and the derivation audit searches, only what the writer may read: its own records and the tenant's
 * shared ones. Another principal's record is refused exactly as one that does not exist, and its words are no
 * evidence for or against a write, so neither its existence nor its content can be probed by writing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { uniqueId } from '../../support/harness.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { HISTORY_POOL_LIMIT } from '../../../src/ingestion/derivation-admission.js';

const TOLD = 'I moved to Berlin in May because I got a new job at Siemens.';
const GUESS = 'The user moved to Berlin in March because of the new job at Siemens.';

describe('citations and audit evidence stay within what the writer may read', () => {
  let app: TestApp;
  let tenant: string;
  const write = async (by: string, payload: object) =>
    app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], by),
      payload,
    });
  const memoryAbout = (subject: string, overrides: Record<string, unknown> = {}) =>
    sampleMemory({ subjects: [subject], kind: 'relation', attribute: 'residence', ...overrides });
  /** agent-1's event about a subject, in its own scope or the tenant's; returns the event's and memory's ids. */
  const told = async (subject: string, scope: 'principal' | 'tenant') => {
    const response = await write('agent-1', {
      events: [sampleEvent({ subjects: [subject], content: TOLD, occurredAt: '2026-11-01T10:00:00Z', scope })],
      memories: [memoryAbout(subject, { content: 'The user moved to Berlin in May.', scope })],
    });
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json<{ events: { id: string }[]; memories: { id: string }[] }>();
    return { event: body.events[0]!.id, memory: body.memories[0]!.id };
  };

  beforeAll(async () => {
    app = await startTestApp({ config: { LETHE_DERIVATION_AUDIT: 'enforce' } });
    tenant = uniqueTenant();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('refuses a citation of another principal’s event or memory exactly as one of a record that does not exist', async () => {
    const subject = uniqueId('s');
    const theirs = await told(subject, 'principal');
    const refusal = async (provenance: object) => {
      const response = await write('agent-2', {
        events: [],
        memories: [
          memoryAbout(subject, { content: 'Lives in Berlin.', provenance: { derivationRule: 'r', ...provenance } }),
        ],
      });
      return { status: response.statusCode, error: response.json<{ error: object }>().error };
    };
    const foreignEvent = await refusal({ eventIds: [theirs.event] });
    const missingEvent = await refusal({ eventIds: ['evt_0000000000000000000000000000000000000000'] });
    expect(foreignEvent).toEqual(missingEvent);
    expect(foreignEvent).toMatchObject({ status: 422, error: { code: 'LineageRefused' } });
    const foreignParent = await refusal({ parentIds: [theirs.memory] });
    const missingParent = await refusal({ parentIds: ['mem_00000000-0000-0000-0000-000000000000'] });
    expect(foreignParent).toEqual(missingParent);
    // The writer itself cites them.
    const own = await write('agent-1', {
      events: [],
      memories: [
        memoryAbout(subject, {
          content: 'Lives in Berlin.',
          provenance: { eventIds: [theirs.event], parentIds: [theirs.memory], derivationRule: 'r' },
        }),
      ],
    });
    expect(own.statusCode, own.body).toBe(201);
  });

  it('never refuses, repairs or supports a write with another principal’s events, and does with shared ones', async () => {
    const privateSubject = uniqueId('s');
    const privately = await told(privateSubject, 'principal');
    const guess = (subject: string, by: string) =>
      write(by, {
        events: [
          sampleEvent({
            subjects: [subject],
            content: 'We talked about the move.',
            occurredAt: '2026-11-02T10:00:00Z',
          }),
        ],
        memories: [memoryAbout(subject, { content: GUESS, derivedAt: '2026-11-03T10:00:00Z' })],
      });
    // Positive control: the event's own writer is refused, its event contradicting the month.
    const owner = await guess(privateSubject, 'agent-1');
    expect(owner.statusCode, owner.body).toBe(409);
    expect(owner.body).toContain(privately.event);
    // Another agent's guess is audited without it: no refusal, and nothing of it in the record.
    const stranger = await guess(privateSubject, 'agent-2');
    expect(stranger.statusCode, stranger.body).toBe(201);
    expect(stranger.body).not.toContain(privately.event);
    const id = stranger.json<{ memories: { id: string }[] }>().memories[0]!.id;
    const stored = await app.services.memories.get(tenant, id);
    expect(JSON.stringify(stored!.derivation ?? {})).not.toContain(privately.event);
    expect(stored!.provenance.repairedEventIds ?? []).not.toContain(privately.event);

    // What the tenant shares is evidence for everyone.
    const sharedSubject = uniqueId('s');
    const shared = await told(sharedSubject, 'tenant');
    const refused = await guess(sharedSubject, 'agent-2');
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.body).toContain(shared.event);
  });

  it('searches the writer’s own history whole, however many events other agents wrote about the subject since', async () => {
    const subject = uniqueId('s');
    const own = await told(subject, 'principal');
    // A full history pool of agent-2's private events about the subject, all later than agent-1's own: read in one
    // pool across scopes, they would fill it and push agent-1's event out of the audit. One is recorded through the
    // store; the others are copies of its row under ids of their own (written directly, for speed).
    const { event: template } = await app.services.events.record({
      tenant,
      namespace: 'support',
      source: 'chat',
      externalId: uniqueId('crowd'),
      content: 'Small talk about the weather.',
      subjects: [subject],
      sensitivity: 'internal',
      trustTier: 2,
      occurredAt: new Date('2026-11-01T11:00:00Z'),
      recordedBy: 'agent-2',
      scope: 'principal:agent-2',
    });
    const rows = app.runtime.db.collection<{ _id: string } & Record<string, unknown>>(Collections.events);
    const row = (await rows.findOne({ _id: template._id }))!;
    await rows.insertMany(
      Array.from({ length: HISTORY_POOL_LIMIT }, (_, n) => ({
        ...row,
        _id: `${template._id}-${n}`,
        idempotencyKey: `${String(row.idempotencyKey)}-${n}`,
        externalId: `${String(row.externalId)}-${n}`,
        content: `Small talk number ${n} about the weather.`,
        occurredAt: new Date(Date.parse('2026-11-01T11:00:01Z') + n * 1000),
      })),
    );
    const guess = await write('agent-1', {
      events: [
        sampleEvent({ subjects: [subject], content: 'We talked about the move.', occurredAt: '2026-11-02T10:00:00Z' }),
      ],
      memories: [memoryAbout(subject, { content: GUESS, derivedAt: '2026-11-03T10:00:00Z' })],
    });
    // Its own event still contradicts the month, as it did with no crowd.
    expect(guess.statusCode, guess.body).toBe(409);
    expect(guess.body).toContain(own.event);
  });
});
