/**
 * Content hashes at rest are keyed over the content's SHA-256 under the tenant's own key: equal content in one
 * tenant hashes equal (deduplication), apart across tenants, and never to the plain digest; the plain digest a DPO
 * gives is found in every form a row may store; a row written before keying is re-keyed from its digest alone.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  contentHashOf,
  keyedDigest,
  keyedIdempotencyKey,
  keyedStoredHash,
  storedContentForms,
  storedDigestForms,
  storedIdempotencyKeyForms,
  subjectContentParts,
} from '../../../src/substrate/content-hash.js';
import { createTenantMacs } from '../../../src/substrate/fingerprint.js';
import { eventIdOf, eventRecordOf, idempotencyKeyOf } from '../../../src/substrate/events/event-store.js';
import { stageMentions } from '../../../src/substrate/staging/staging-store.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const oldKey = { id: 'k-old', secret: 'an-old-server-secret-of-at-least-32-chars' };
const newKey = { id: 'k-new', secret: 'a-new-server-secret-of-at-least-32-chars!' };
const before = createTenantMacs([oldKey]);
const rotated = createTenantMacs([newKey, oldKey]);
const tenant = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);

describe('keyed content hashes', () => {
  it('are the same for the same content in a tenant, apart across tenants, and never the plain digest', () => {
    fc.assert(
      fc.property(tenant, tenant, fc.string({ minLength: 1 }), (a, b, content) => {
        const hash = contentHashOf(before, a, content);
        expect(contentHashOf(before, a, content)).toBe(hash);
        expect(hash).not.toBe(sha256(content));
        expect(hash).toBe(keyedDigest(before, a, sha256(content)));
        if (a !== b) expect(contentHashOf(before, b, content)).not.toBe(hash);
      }),
    );
  });

  it('a plain digest is found in every form a row may hold: under the current key, an older one, or plain', () => {
    const digest = sha256('Alice is HIV positive.');
    const forms = storedDigestForms(rotated, 'acme', digest);
    expect(forms).toEqual([keyedDigest(rotated, 'acme', digest), keyedDigest(before, 'acme', digest), digest]);
    expect(storedContentForms(rotated, 'acme', 'Alice is HIV positive.')).toEqual(forms);
    expect(subjectContentParts(rotated, 'acme', ['alice', 'bob'], 'Alice is HIV positive.')).toHaveLength(6);
  });

  it('a row written before keying is re-keyed from its digest alone; a keyed row is left as it is', () => {
    const digest = sha256('Bob moved to Faro.');
    expect(keyedStoredHash(rotated, 'acme', { contentHash: digest })).toBe(keyedDigest(rotated, 'acme', digest));
    const keyed = keyedDigest(before, 'acme', digest);
    expect(keyedStoredHash(rotated, 'acme', { contentHash: keyed, hashKeyId: oldKey.id })).toBe(keyed);
  });

  it('an event keeps its id (from the plain idempotency key) and stores the key and content hash keyed', () => {
    const input = {
      tenant: 'acme',
      namespace: 'support',
      source: 'crm',
      externalId: 't-1',
      content: 'Alice is HIV positive.',
      subjects: ['alice'],
      sensitivity: 'special' as const,
      trustTier: 1,
      occurredAt: new Date(0),
      recordedBy: 'agent',
      scope: 'tenant',
    };
    const plainKey = idempotencyKeyOf('crm', 't-1', sha256(input.content));
    const record = eventRecordOf(rotated, input, new Date(0), null);
    expect(record._id).toBe(eventIdOf(rotated, 'acme', plainKey));
    expect(record.idempotencyKey).toBe(keyedIdempotencyKey(rotated, 'acme', plainKey));
    expect(record.contentHash).toBe(contentHashOf(rotated, 'acme', input.content));
    expect(record.hashKeyId).toBe(newKey.id);
    expect(JSON.stringify({ ...record, content: undefined })).not.toMatch(
      new RegExp(`${sha256(input.content)}|${plainKey}`),
    );
    expect(storedIdempotencyKeyForms(rotated, 'acme', plainKey)).toEqual([
      record.idempotencyKey,
      keyedIdempotencyKey(before, 'acme', plainKey),
      plainKey,
    ]);
  });

  it('a staged write is found by the hash its erased copy stored, in whichever form, and not by another tenant’s', () => {
    const body = { memories: [{ subjects: ['alice'], content: 'Alice is HIV positive.' }] };
    const digest = sha256('Alice is HIV positive.');
    const mentioning = (contentHashes: string[], inTenant = 'acme') =>
      stageMentions(rotated, inTenant, body, { subjects: [], ids: [], contentHashes });
    expect(mentioning([keyedDigest(rotated, 'acme', digest)])).toBe(true);
    expect(mentioning([keyedDigest(before, 'acme', digest)])).toBe(true);
    expect(mentioning([digest])).toBe(true);
    expect(mentioning([keyedDigest(rotated, 'acme', digest)], 'other')).toBe(false);
  });
});
