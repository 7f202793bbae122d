/**
 * What an erasure leaves outside the event log, the memories and lineage: staged batches of ingests that never
 * finished, reviewers' sign-off reasons, and dispute reasons kept after a resolution that failed. The side-record
 * eraser removes those that concern the erased records, subjects or content, and nothing else.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/shared/sha256.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { disputeAbout, leaveStage, signOff, writeBatch } from '../../support/side-records-fixture.js';

describe('side-record erasure', () => {
  let app: TestApp;
  const tenant = uniqueTenant();
  const otherTenant = uniqueTenant();
  const canary = `CANARY-${randomUUID()}`;
  const subject = 'subject-erase';
  const kept = 'subject-keep';
  /** Content erased by fingerprint: only its hash is named to the eraser. */
  const erasedContent = `Ana's passport number is ${canary}.`;

  let signedOff: string;
  let signedOffControl: string;
  let disputed: string[];
  let disputeId: string;
  let controlDisputeId: string;
  let erasedEventId: string;
  let redelivered: { source: string; externalId: string; content: string };
  const stages: Record<'bySubject' | 'byParent' | 'byContent' | 'byEventId' | 'control' | 'otherTenant', string> = {
    bySubject: `stg_${randomUUID()}`,
    byParent: `stg_${randomUUID()}`,
    byContent: `stg_${randomUUID()}`,
    byEventId: `stg_${randomUUID()}`,
    control: `stg_${randomUUID()}`,
    otherTenant: `stg_${randomUUID()}`,
  };

  const raw = (name: string) => app.runtime.db.collection<{ _id: string; tenant: string }>(name);
  const stageIds = async (t: string) =>
    (await raw(Collections.staging).find({ tenant: t }).toArray()).map((d) => d._id).sort();
  const reasonsOf = async (id: string) => raw(Collections.disputeReasons).countDocuments({ tenant, disputeId: id });

  beforeAll(async () => {
    app = await startTestApp();
    signedOff = await signOff(app, tenant, subject, `Approved: the payslip for ${canary} shows it.`);
    signedOffControl = await signOff(app, tenant, kept, 'Approved: matches the contract.');

    ({ ids: disputed, disputeId } = await disputeAbout(app, tenant, subject));
    // Words kept for a resolution that never reached its workflow (the API stopped between keeping them and the
    // Update): nothing decided, nothing will remove them but the erasure.
    await app.services.disputes.keepReason(tenant, disputeId, 'h', `HR confirmed it for ${canary}`);
    const control = await disputeAbout(app, tenant, kept);
    controlDisputeId = control.disputeId;
    await app.services.disputes.keepReason(tenant, controlDisputeId, 'h', 'a reason about someone else');

    // Stages left by ingests that never ran to the end (e.g. the API stopped between staging and starting).
    const erased = await writeBatch(app, tenant, 'agent-1', {
      events: [sampleEvent({ subjects: [kept], content: `Delivery note ${canary}.` })],
    });
    erasedEventId = erased.events[0]!.id;
    const stored = (await app.services.events.get(tenant, erasedEventId))!;
    redelivered = { source: stored.source, externalId: stored.externalId, content: stored.content };
    const stage = (id: string, t: string, body: { events?: object[]; memories?: object[] }) =>
      leaveStage(app, t, body, id);
    await stage(stages.bySubject, tenant, {
      events: [sampleEvent({ subjects: [subject], content: `Ana's codeword is ${canary}.` })],
      memories: [
        { ...sampleMemory({ subjects: [subject], content: `Codeword ${canary}.` }), id: `mem_${randomUUID()}` },
      ],
    });
    await stage(stages.byParent, tenant, {
      memories: [
        {
          ...sampleMemory({
            subjects: ['segment-porto'],
            kind: 'summary',
            content: 'Summary of salaries.',
            provenance: { eventIds: [], parentIds: [signedOff], derivationRule: 'summarise' },
          }),
          id: `mem_${randomUUID()}`,
        },
      ],
    });
    await stage(stages.byContent, tenant, { events: [sampleEvent({ subjects: [kept], content: erasedContent })] });
    await stage(stages.byEventId, tenant, {
      events: [sampleEvent({ subjects: [kept], ...redelivered, namespace: stored.namespace })],
    });
    await stage(stages.control, tenant, {
      events: [sampleEvent({ subjects: [kept], content: 'Ben prefers phone calls.' })],
    });
    await stage(stages.otherTenant, otherTenant, {
      events: [sampleEvent({ subjects: [subject], content: erasedContent })],
    });
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  });

  it("removes the subject's staged batches, sign-off reasons and dispute reasons, and nothing else", async () => {
    // Before: every one of them is there, with its words.
    expect(await stageIds(tenant)).toEqual(
      [stages.bySubject, stages.byParent, stages.byContent, stages.byEventId, stages.control].sort(),
    );
    expect((await app.services.reviews.get(tenant, signedOff))?.reason).toContain(canary);
    expect(await reasonsOf(disputeId)).toBe(1);
    expect(await app.services.disputes.reason(tenant, disputeId, 'h')).toContain(canary);
    // At rest the reviewers' words are sealed, each under a data key of its own.
    for (const name of [Collections.reviews, Collections.disputeReasons]) {
      const rows = await raw(name).find({ tenant }).toArray();
      expect(rows.length, name).toBeGreaterThan(0);
      expect(JSON.stringify(rows), name).not.toContain(canary);
      for (const row of rows as unknown as { reason?: string; text?: string }[])
        expect(row.reason ?? row.text, name).toMatch(/^lethe-sealed:v2:kp_/);
    }
    const reasonKeys = [`review:${signedOff}`, `reason:${disputeId}:h`];
    const controlKeys = [`review:${signedOffControl}`, `reason:${controlDisputeId}:h`];
    const vault = app.runtime.cipher.vault;
    expect((await vault.idsWithKeys(tenant, [...reasonKeys, ...controlKeys])).sort()).toEqual(
      [...reasonKeys, ...controlKeys].sort(),
    );

    const counts = await app.services.sideRecords.erase(tenant, {
      ids: [signedOff, disputed[0]!, erasedEventId],
      subjects: [subject],
      contentHashes: [sha256Hex(erasedContent)],
    });

    // The three records were written through the API: their stored bytes go back to the tenant's quota.
    expect(counts).toEqual({
      staged_writes: 4,
      review_decisions: 1,
      dispute_reasons: 1,
      exposures: 0,
      stored_record_bytes: 3,
      // No access package held them (the access request test erases one that does), and no correction was open
      // over them (the rectification test voids one that is).
      access_packages: 0,
      rectification_requests: 0,
    });
    expect(await stageIds(tenant)).toEqual([stages.control]);
    expect(await app.services.reviews.get(tenant, signedOff)).toBeNull();
    expect(await reasonsOf(disputeId)).toBe(0);
    // Their keys are destroyed: a copy of those rows in the log or a backup no longer opens. The others keep theirs.
    expect(await vault.idsWithKeys(tenant, reasonKeys)).toEqual([]);
    expect((await vault.idsWithKeys(tenant, controlKeys)).sort()).toEqual([...controlKeys].sort());
    // Nothing of the tenant's side collections still holds the canary.
    for (const name of [Collections.staging, Collections.reviews, Collections.disputeReasons]) {
      const left = await raw(name).find({ tenant }).toArray();
      expect(JSON.stringify(left), name).not.toContain(canary);
    }
    // Other subjects' records and other tenants' stages are untouched.
    expect((await app.services.reviews.get(tenant, signedOffControl))?.reason).toBe('Approved: matches the contract.');
    expect(await reasonsOf(controlDisputeId)).toBe(1);
    expect(await stageIds(otherTenant)).toEqual([stages.otherTenant]);

    // Idempotent: a retry of the purge step finds nothing left.
    expect(
      await app.services.sideRecords.erase(tenant, {
        ids: [signedOff, disputed[0]!, erasedEventId],
        subjects: [subject],
        contentHashes: [sha256Hex(erasedContent)],
      }),
    ).toEqual({
      staged_writes: 0,
      review_decisions: 0,
      dispute_reasons: 0,
      exposures: 0,
      stored_record_bytes: 0,
      access_packages: 0,
      rectification_requests: 0,
    });
  });
});
