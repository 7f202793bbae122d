/**
 * Ids and hashes that leave a tenant (event ids in certificates and audit exports, retrieval query hashes) are
 * keyed under a key of that tenant's own, derived from the server secret: without it a guessed source, external id
 * and content confirm nothing, and one tenant's key reproduces none of another tenant's values.
 */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Reader } from '../../../src/governance/read/reader.js';
import { createReadTrace } from '../../../src/retrieval/read-trace.js';
import type { ExposureStore, RetrievalRecord } from '../../../src/retrieval/exposure-store.js';
import { eventIdOf, eventRecordOf, idempotencyKeyOf } from '../../../src/substrate/events/event-store.js';
import { createTenantMacs, tenantKeyOf } from '../../../src/substrate/fingerprint.js';
import { erasureRequestId } from '../../../src/temporal/erasure-gateway.js';

const SECRET = 'a-server-secret-of-at-least-32-characters';
const macs = createTenantMacs(SECRET);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
/** A keyed hash computed as a holder of one tenant's key would. */
const withKey = (key: Buffer, ...parts: string[]) => {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(`${Buffer.byteLength(part, 'utf8')}:${part}|`, 'utf8');
  return mac.digest('hex');
};

describe('event ids', () => {
  const key = idempotencyKeyOf('crm', 'ticket-7', sha256('Card 4111 1111 1111 1111'));

  it('cannot be confirmed from a guessed event by the plain hash of tenant and idempotency key', () => {
    const id = eventIdOf(macs, 'acme', key);
    expect(id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(id).not.toBe(`evt_${sha256(`acme\u0000${key}`).slice(0, 32)}`);
    // Nor under another server secret.
    expect(eventIdOf(createTenantMacs(`${SECRET}-other`), 'acme', key)).not.toBe(id);
  });

  it("are stable for the same event, differ across tenants, and follow only the tenant's own key", () => {
    expect(eventIdOf(macs, 'acme', key)).toBe(eventIdOf(createTenantMacs(SECRET), 'acme', key));
    expect(eventIdOf(macs, 'globex', key)).not.toBe(eventIdOf(macs, 'acme', key));
    const acmeKey = tenantKeyOf(SECRET, 'acme');
    expect(`evt_${withKey(acmeKey, 'event-id', key).slice(0, 32)}`).toBe(eventIdOf(macs, 'acme', key));
    expect(`evt_${withKey(acmeKey, 'event-id', key).slice(0, 32)}`).not.toBe(eventIdOf(macs, 'globex', key));
  });

  it('are the ids the stored form of an event carries', () => {
    const record = eventRecordOf(
      macs,
      {
        tenant: 'acme',
        namespace: 'support',
        source: 'crm',
        externalId: 'ticket-7',
        content: 'Card 4111 1111 1111 1111',
        subjects: ['s-1'],
        sensitivity: 'internal',
        trustTier: 2,
        occurredAt: new Date(0),
        recordedBy: 'agent-1',
        scope: 'tenant',
      },
      new Date(0),
      null,
    );
    expect(record._id).toBe(eventIdOf(macs, 'acme', key));
  });
});

describe('retrieval query hashes', () => {
  it("are keyed under the reading tenant's key: equal queries of two tenants share nothing", async () => {
    const recorded: RetrievalRecord[] = [];
    const exposures = {
      recordRetrieval: (retrieval: RetrievalRecord) => {
        recorded.push(retrieval);
        return Promise.resolve();
      },
    } as unknown as ExposureStore;
    const trace = createReadTrace({ exposures, macs });
    const reader = (tenant: string) =>
      ({
        principal: { id: 'agent-1', tenant, roles: ['agent'] },
        purpose: 'support',
        intent: 'task',
      }) as unknown as Reader;
    await trace.recordRead(reader('acme'), 'search', 'who paid with card 4111', []);
    await trace.recordRead(reader('globex'), 'search', 'who paid with card 4111', []);
    const [acme, globex] = recorded.map((r) => r.queryHash);
    expect(acme).toBe(withKey(tenantKeyOf(SECRET, 'acme'), 'retrieval-query', 'who paid with card 4111'));
    expect(globex).toBe(withKey(tenantKeyOf(SECRET, 'globex'), 'retrieval-query', 'who paid with card 4111'));
    expect(globex).not.toBe(withKey(tenantKeyOf(SECRET, 'acme'), 'retrieval-query', 'who paid with card 4111'));
  });
});

describe('erasure request ids', () => {
  it("cannot be confirmed from a guessed request key by its plain hash, and follow the tenant's own key", () => {
    const id = erasureRequestId(macs, 'acme', { requestKey: 'ticket-2026-17', legalGround: 'art17-1a' }, 'h', 1);
    expect(id).toMatch(/^era_[0-9a-f]{24}$/);
    expect(id).not.toBe(`era_${sha256('acme\u0000ticket-2026-17').slice(0, 24)}`);
    expect(id).toBe(
      `era_${withKey(tenantKeyOf(SECRET, 'acme'), 'erasure-request-key', 'ticket-2026-17').slice(0, 24)}`,
    );
    expect(
      erasureRequestId(macs, 'globex', { requestKey: 'ticket-2026-17', legalGround: 'art17-1a' }, 'h', 1),
    ).not.toBe(id);
    expect(erasureRequestId(macs, 'acme', { requestKey: 'ticket-2026-17', legalGround: 'art17-1a' }, 'h', 2)).toBe(
      `${id}-2`,
    );
  });
});
