import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Command } from 'commander';
import { registerReviewCommands } from '../../../app/cli/commands/review.command.js';
import { createCliContext } from '../../../app/cli/context.js';
import { CliError } from '../../../app/cli/exit-codes.js';
import { completeErasure, fileErasure } from '../../support/erasure-fixture.js';
import { disputeWorkflowId } from '../../../src/shared/workflow-ids.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';
import { waitForMessage } from '../../../stack/smtp/mailbox.js';
import { loadStackConfig } from '../../../stack/stack-config.js';

interface SearchAnswer {
  results: {
    memory: { id: string; status: string; validFrom: string; validTo: string | null };
    disputes?: { id: string; with: string[] }[];
  }[];
}

describe('disputes and supersession', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  /** One event and one memory about subject-1's employer, written by `writer`. */
  async function writeEmployer(
    tenant: string,
    writer: string,
    content: string,
    validFrom: string,
    event: Record<string, unknown> = {},
  ) {
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], writer),
      payload: {
        events: [sampleEvent({ content: `Call note: ${content}`, ...event })],
        memories: [sampleMemory({ kind: 'fact', attribute: 'employer', content, validFrom })],
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ memories: { id: string; status: string }[] }>().memories[0]!;
  }

  // The two sides are two agents' records: a reviewer's search reads the whole tenant, so it sees both.
  const search = async (tenant: string, intent: 'current' | 'history') =>
    (
      await app.request({
        method: 'POST',
        url: `/v1/tenants/${tenant}/search`,
        token: await app.token(tenant, ['reviewer'], 'rita-reads'),
        payload: { query: 'works at', intent },
      })
    ).json<SearchAnswer>();

  async function transitionsOf(tenant: string, id: string) {
    const moves: string[] = [];
    for await (const entry of app.services.audit.entries(tenant)) {
      const details = entry.details as { from?: string; to?: string } | undefined;
      if (entry.target === id && details?.from && details.to) moves.push(`${details.from}>${details.to}`);
    }
    return moves;
  }

  it('disputes a contradiction, discloses both sides, and a keep-one adjudication supersedes the loser', async () => {
    const tenant = uniqueTenant();
    const first = await writeEmployer(tenant, 'agent-1', 'Works at Acme Corp.', '2024-01-01T00:00:00Z');
    expect(first.status).toBe('active');
    const second = await writeEmployer(tenant, 'agent-2', 'Works at Globex Ltd.', '2025-06-01T00:00:00Z');
    expect(second.status).toBe('disputed');
    expect((await app.services.memories.get(tenant, first.id))?.status).toBe('disputed');

    // Retrieval serves the two side by side, each naming the dispute and the other record.
    const current = await search(tenant, 'current');
    expect(current.results.map((r) => r.memory.id).sort()).toEqual([first.id, second.id].sort());
    const disputeId = current.results[0]!.disputes![0]!.id;
    for (const r of current.results)
      expect(r.disputes).toEqual([{ id: disputeId, with: [r.memory.id === first.id ? second.id : first.id] }]);
    await waitForMessage(
      loadStackConfig().smtp.captureDir,
      (m) => m.subject.includes(disputeId) && m.subject.includes('opened'),
    );

    const reviewer = await app.token(tenant, ['reviewer'], 'rita');
    const queue = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/review-queue?type=dispute`,
      token: reviewer,
    });
    expect(queue.json<{ items: { type: string; id: string }[] }>().items).toEqual([
      expect.objectContaining({ type: 'dispute', id: disputeId }),
    ]);
    const shown = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/disputes/${disputeId}`,
      token: reviewer,
    });
    expect(
      shown
        .json<{ records: { id: string; content: string }[] }>()
        .records.map((r) => r.content)
        .sort(),
    ).toEqual(['Works at Acme Corp.', 'Works at Globex Ltd.']);

    // A writer of either side may not adjudicate, even holding the reviewer role.
    const self = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/disputes/${disputeId}/resolution`,
      token: await app.token(tenant, ['reviewer', 'agent'], 'agent-1'),
      payload: { outcome: 'keep-one', memoryId: first.id, reason: 'my own note is right' },
    });
    expect(self.statusCode).toBe(403);
    const missingId = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/disputes/${disputeId}/resolution`,
      token: reviewer,
      payload: { outcome: 'keep-one', reason: 'the newer statement' },
    });
    expect(missingId.statusCode).toBe(400);
    expect(missingId.json<{ error: { field: string } }>().error.field).toBe('memoryId');

    const resolved = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/disputes/${disputeId}/resolution`,
      token: reviewer,
      payload: { outcome: 'keep-one', memoryId: second.id, reason: 'HR confirmed the move to Globex in June 2025' },
    });
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.json()).toMatchObject({
      outcome: 'keep-one',
      decidedBy: 'rita',
      statuses: { [first.id]: 'superseded', [second.id]: 'active' },
    });

    const loser = await app.services.memories.get(tenant, first.id);
    expect(loser?.validTo?.toISOString()).toBe('2025-06-01T00:00:00.000Z');
    expect((await search(tenant, 'current')).results.map((r) => r.memory.id)).toEqual([second.id]);
    const history = (await search(tenant, 'history')).results;
    expect(history.map((r) => [r.memory.id, r.memory.status, r.memory.validFrom, r.memory.validTo]).sort()).toEqual(
      [
        [first.id, 'superseded', '2024-01-01T00:00:00.000Z', '2025-06-01T00:00:00.000Z'],
        [second.id, 'active', '2025-06-01T00:00:00.000Z', null],
      ].sort(),
    );

    // The resolution is an event carrying the reviewer's reason; the dispute names it.
    const dispute = await app.services.disputes.get(tenant, disputeId);
    expect(dispute).toMatchObject({
      state: 'resolved',
      resolution: { outcome: 'keep-one', memoryId: second.id, reviewer: 'rita' },
    });
    const event = await app.services.events.get(tenant, dispute!.resolution!.eventId);
    expect(event).toMatchObject({
      source: 'lethe-review',
      content: 'HR confirmed the move to Globex in June 2025',
      recordedBy: 'rita',
    });

    // One audit entry per move, and the moves are the lifecycle's.
    expect(await transitionsOf(tenant, first.id)).toEqual(['active>disputed', 'disputed>superseded']);
    expect(await transitionsOf(tenant, second.id)).toEqual(['active>disputed', 'disputed>active']);

    const again = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/disputes/${disputeId}/resolution`,
      token: reviewer,
      payload: { outcome: 'keep-both', reason: 'second thoughts' },
    });
    expect(again.statusCode).toBe(409);
  });

  it('keeps both, or rejects one, as the reviewer decides', async () => {
    const tenant = uniqueTenant();
    const a = await writeEmployer(tenant, 'agent-1', 'Works at Initech.', '2024-01-01T00:00:00Z');
    const b = await writeEmployer(tenant, 'agent-2', 'Works at Hooli.', '2024-03-01T00:00:00Z');
    const [disputeId] = (await app.services.disputes.openFor(tenant, a.id)).map((d) => d._id);
    const reviewer = await app.token(tenant, ['reviewer'], 'rita');
    const kept = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/disputes/${disputeId}/resolution`,
      token: reviewer,
      payload: { outcome: 'keep-both', reason: 'two part-time jobs' },
    });
    expect(kept.json()).toMatchObject({ statuses: { [a.id]: 'active', [b.id]: 'active' } });

    const c = await writeEmployer(tenant, 'agent-3', 'Works at Vandelay.', '2024-05-01T00:00:00Z');
    // The newcomer disagrees with both kept records: two disputes, and it is in both.
    const open = await app.services.disputes.openFor(tenant, c.id);
    expect(open).toHaveLength(2);
    const [first, second] = open;
    const rejected = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/disputes/${first!._id}/resolution`,
      token: reviewer,
      payload: { outcome: 'reject-one', memoryId: c.id, reason: 'no such company' },
    });
    expect(rejected.statusCode, rejected.body).toBe(200);
    const other = first!.memoryIds.find((id) => id !== c.id)!;
    expect((await app.services.memories.get(tenant, c.id))?.status).toBe('rejected');
    expect((await app.services.memories.get(tenant, other))?.status).toBe('active');
    // The second dispute's other record stays disputed until that dispute is adjudicated.
    const still = second!.memoryIds.find((id) => id !== c.id)!;
    expect((await app.services.memories.get(tenant, still))?.status).toBe('disputed');
  });

  it('supersedes the earlier record when the same source corrects its event', async () => {
    const tenant = uniqueTenant();
    const first = await writeEmployer(tenant, 'agent-1', 'Works at Acme Corp.', '2024-01-01T00:00:00Z', {
      externalId: 'call-7',
    });
    const corrected = await writeEmployer(tenant, 'agent-1', 'Works at Acme Holdings.', '2024-01-01T00:00:00Z', {
      externalId: 'call-7',
    });
    expect(corrected.status).toBe('active');
    expect(await app.services.disputes.openFor(tenant, corrected.id)).toEqual([]);
    const earlier = await app.services.memories.get(tenant, first.id);
    expect(earlier?.status).toBe('superseded');
    expect(earlier?.validTo).not.toBeNull();
    expect((await search(tenant, 'current')).results.map((r) => r.memory.id)).toEqual([corrected.id]);
    expect((await search(tenant, 'history')).results.map((r) => r.memory.id).sort()).toEqual(
      [first.id, corrected.id].sort(),
    );
    expect(await transitionsOf(tenant, first.id)).toEqual(['active>superseded']);
  });

  it('does not dispute records about different valid times or with the same content', async () => {
    const tenant = uniqueTenant();
    const response = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent'], 'agent-1'),
      payload: {
        events: [sampleEvent({ content: 'Call note: Works at Acme Corp. A later call: Works at Globex Ltd.' })],
        memories: [
          sampleMemory({
            kind: 'fact',
            attribute: 'employer',
            content: 'Works at Acme Corp.',
            validFrom: '2020-01-01T00:00:00Z',
            validTo: '2021-01-01T00:00:00Z',
          }),
          sampleMemory({
            kind: 'fact',
            attribute: 'employer',
            content: 'Works at Globex Ltd.',
            validFrom: '2021-01-01T00:00:00Z',
          }),
          sampleMemory({
            kind: 'fact',
            attribute: 'employer',
            content: 'Works at Globex Ltd.',
            validFrom: '2022-01-01T00:00:00Z',
          }),
        ],
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json<{ memories: { status: string }[] }>().memories.map((m) => m.status)).toEqual([
      'active',
      'active',
      'active',
    ]);
  });

  it('closes a dispute without a decision when one side is erased, and reinstates the other', async () => {
    const tenant = uniqueTenant();
    const first = await writeEmployer(tenant, 'agent-1', 'Works at Soylent.', '2024-01-01T00:00:00Z');
    const second = await writeEmployer(tenant, 'agent-2', 'Works at Tyrell.', '2024-02-01T00:00:00Z');
    const [dispute] = await app.services.disputes.openFor(tenant, first.id);
    const requestId = await fileErasure(app, tenant, { memoryIds: [first.id] });
    // The event the memory was extracted from repeats it: the DPO erases it too.
    expect((await completeErasure(app, tenant, requestId, 'extend')).state).toBe('completed');
    expect(await app.services.disputes.get(tenant, dispute!._id)).toMatchObject({ state: 'void', resolution: null });
    expect((await app.services.memories.get(tenant, second.id))?.status).toBe('active');
    expect(await transitionsOf(tenant, second.id)).toEqual(['active>disputed', 'disputed>active']);
    const ended = await app.services.temporalClient.workflow
      .getHandle(disputeWorkflowId(tenant, dispute!._id))
      .result();
    expect(ended).toEqual({ disputeId: dispute!._id, voided: true });
    const late = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/disputes/${dispute!._id}/resolution`,
      token: await app.token(tenant, ['reviewer'], 'rita'),
      payload: { outcome: 'keep-both', reason: 'too late' },
    });
    // To a reviewer (no erasure rights) the voided dispute reads as one that never existed, by every route.
    expect(late.statusCode, late.body).toBe(404);
    expect(late.json<{ error: { message: string } }>().error.message).toBe('dispute: not found');
    const seen = await app.request({
      method: 'GET',
      url: `/v1/tenants/${tenant}/disputes/${dispute!._id}`,
      token: await app.token(tenant, ['reviewer'], 'rita'),
    });
    expect(seen.statusCode, seen.body).toBe(404);
    expect(seen.body).not.toMatch(/eras|void/i);
    // A caller with erasure rights is told why.
    const admin = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/disputes/${dispute!._id}/resolution`,
      token: await app.token(tenant, ['admin', 'reviewer'], 'ada'),
      payload: { outcome: 'keep-both', reason: 'too late' },
    });
    expect(admin.statusCode, admin.body).toBe(409);
    expect(admin.json<{ error: { message: string } }>().error.message).toBe(
      'dispute: closed, a record of it was erased',
    );
  }, 240_000);

  describe('at the command line', () => {
    let baseUrl: string;
    beforeAll(async () => {
      baseUrl = await app.api.listen({ host: '127.0.0.1', port: 0 });
    });

    /** Runs `lethe <args>` in-process against the listening API as a reviewer; returns stdout. */
    async function lethe(tenant: string, args: string[]): Promise<string> {
      const bearer = await app.token(tenant, ['reviewer'], 'rita');
      let out = '';
      const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        out += String(chunk);
        return true;
      });
      try {
        const program = new Command('lethe').exitOverride();
        registerReviewCommands(program, () => createCliContext({ api: baseUrl, token: bearer }));
        await program.parseAsync(args, { from: 'user' });
        return out;
      } finally {
        write.mockRestore();
      }
    }

    it('lists the dispute in the queue and adjudicates it with a reason', async () => {
      const tenant = uniqueTenant();
      const a = await writeEmployer(tenant, 'agent-1', 'Works at Umbrella.', '2024-01-01T00:00:00Z');
      const b = await writeEmployer(tenant, 'agent-2', 'Works at Cyberdyne.', '2024-02-01T00:00:00Z');
      const queue = await lethe(tenant, ['review', 'queue', '--type', 'dispute']);
      const disputeId = /dsp_[0-9a-f]+/.exec(queue)?.[0];
      expect(queue).toContain(a.id);
      expect(queue).toContain(b.id);
      await expect(lethe(tenant, ['review', 'resolve', disputeId!, '--keep', b.id])).rejects.toThrow(CliError);
      await expect(
        lethe(tenant, ['review', 'resolve', disputeId!, '--keep', b.id, '--keep-both', '--reason', 'x']),
      ).rejects.toThrow(/exactly one/);
      const resolved = await lethe(tenant, [
        'review',
        'resolve',
        disputeId!,
        '--keep',
        b.id,
        '--reason',
        'payroll shows Cyberdyne',
      ]);
      expect(resolved.trim().split('\n').sort()).toEqual([`${a.id}  superseded`, `${b.id}  active`].sort());
      expect(await lethe(tenant, ['review', 'queue'])).toBe('nothing waiting\n');
    });
  });
});
