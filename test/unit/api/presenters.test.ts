import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { guardPresentedContent, presentEvent, presentMemory, unpresentedContent } from '../../../app/api/presenters.js';
import { registerErrorHandling } from '../../../app/api/errors.js';
import { resolveReader } from '../../../src/governance/read/reader.js';
import { seeEvent, seeMemory } from '../../../src/governance/read/read-judge.js';
import { loadPolicies, requirePolicy } from '../../../src/governance/policy/policy-set.js';
import { memoryRecord } from '../../support/samples.js';
import type { EventRecord } from '../../../src/substrate/model/records.js';

const policies = loadPolicies();
const read = { read: requirePolicy(policies, 'memory-read'), scope: requirePolicy(policies, 'memory-scope') };
const memory = memoryRecord('acme', 'mem_1', 'Ana prefers e-mail (canary-1).', { scope: 'principal:ann' });
const event: EventRecord = {
  _id: 'evt_1',
  tenant: 'acme',
  namespace: 'support',
  source: 'crm',
  externalId: 'x-1',
  contentHash: 'h',
  hashKeyId: 'k0',
  idempotencyKey: 'k',
  subjects: ['customer-ana'],
  content: 'Ana said canary-2.',
  sensitivity: 'internal',
  trustTier: 1,
  occurredAt: new Date(),
  recordedAt: new Date(),
  correctionOf: null,
  recordedBy: 'ann',
  deleted: false,
  scope: 'principal:ann',
};

describe('content leaves the API only through a presenter that took the judge verdict', () => {
  it('finds a content field outside a presented record, wherever it is nested', () => {
    expect(unpresentedContent({ id: 'mem_1', content: 'x' })).toBe('$.content');
    expect(unpresentedContent({ results: [{ memory: { content: 'x' } }] })).toBe('$.results[0].memory.content');
    const ann = resolveReader(read, { id: 'ann', tenant: 'acme', roles: ['agent'] });
    const shown = presentMemory(seeMemory(ann, memory)!);
    expect(unpresentedContent({ results: [{ memory: shown, score: 1 }] })).toBeNull();
    // A copy of a presented record is not presented: spreading it into a new object does not launder it.
    expect(unpresentedContent({ ...shown })).toBe('$.content');
  });

  it('shows an auditor ids and hashes, an owner the content, and another agent nothing', () => {
    const auditor = resolveReader(read, { id: 'aud', tenant: 'acme', roles: ['auditor'] });
    const shown = presentEvent(seeEvent(auditor, event)!);
    expect(shown).toMatchObject({ id: 'evt_1', view: 'content-free', contentHash: 'h' });
    expect(JSON.stringify(shown)).not.toMatch(/canary|customer-ana/);
    // A row written before hashes were keyed holds the plain SHA-256 of its content: that is never shown.
    const { hashKeyId: _keyed, ...legacy } = event;
    expect(presentEvent(seeEvent(auditor, legacy)!)).not.toHaveProperty('contentHash');
    const ann = resolveReader(read, { id: 'ann', tenant: 'acme', roles: ['agent'] });
    expect(presentEvent(seeEvent(ann, event)!)).toMatchObject({ view: 'content', content: 'Ana said canary-2.' });
    const ben = resolveReader(read, { id: 'ben', tenant: 'acme', roles: ['agent'] });
    expect(seeEvent(ben, event)).toBeNull();
    expect(seeMemory(ben, memory)).toBeNull();
    // Another tenant's record is never seen, whatever the grants.
    const dpo = resolveReader(read, { id: 'dpo', tenant: 'other', roles: ['dpo'] });
    expect(seeMemory(dpo, memory)).toBeNull();
  });

  it('refuses a route that hands back content without a presenter (500, the content not sent)', async () => {
    const app = Fastify({ logger: false });
    registerErrorHandling(app);
    guardPresentedContent(app);
    const ann = resolveReader(read, { id: 'ann', tenant: 'acme', roles: ['agent'] });
    app.get('/v1/tenants/:tenant/raw', { config: { action: 'memory.read', reads: 'records' } }, async () => ({
      id: memory._id,
      content: memory.content,
    }));
    app.get('/v1/tenants/:tenant/judged', { config: { action: 'memory.read', reads: 'records' } }, async () =>
      presentMemory(seeMemory(ann, memory)!),
    );
    const raw = await app.inject({ method: 'GET', url: '/v1/tenants/acme/raw' });
    expect(raw.statusCode).toBe(500);
    expect(raw.body).not.toContain('canary-1');
    const judged = await app.inject({ method: 'GET', url: '/v1/tenants/acme/judged' });
    expect(judged.statusCode).toBe(200);
    expect(judged.json()).toMatchObject({ content: memory.content });
    await app.close();
  });
});

describe('a reader of several roles', () => {
  it('reads the union of its purposes grants, never their cross-product', () => {
    const reader = resolveReader(read, { id: 'carl', tenant: 'acme', roles: ['agent', 'admin'] });
    expect(
      reader.grants.map((g) => [g.purpose, g.sensitivities.join('+'), g.scopes === 'all' ? 'all' : 'own']),
    ).toEqual([
      ['support', 'public+internal+confidential', 'own'],
      ['operations', 'public+internal', 'all'],
    ]);
    const confidential = (scope: string) =>
      memoryRecord('acme', 'mem_c', 'c', {
        scope,
        policy: { purpose: 'support', sensitivity: 'confidential', jurisdiction: 'PT', retentionClass: 'r' },
      });
    expect(seeMemory(reader, confidential('principal:carl'))).not.toBeNull();
    expect(seeMemory(reader, confidential('principal:ben'))).toBeNull();
    expect(seeMemory(reader, memoryRecord('acme', 'mem_i', 'i', { scope: 'principal:ben' }))).not.toBeNull();
    // A named purpose selects one grant.
    const operations = resolveReader(
      read,
      { id: 'carl', tenant: 'acme', roles: ['agent', 'admin'] },
      { purpose: 'operations' },
    );
    expect(seeMemory(operations, confidential('principal:carl'))).toBeNull();
  });

  it('grants nothing for a purpose none of its roles holds', () => {
    expect(resolveReader(read, { id: 'a', tenant: 'acme', roles: ['agent'] }, { purpose: 'review' }).grants).toEqual(
      [],
    );
    expect(resolveReader(read, { id: 'a', tenant: 'acme', roles: ['auditor'] }, { purpose: 'support' }).grants).toEqual(
      [],
    );
  });
});
