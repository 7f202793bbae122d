/**
 * A re-embedding whose swap fails after the alias moved (deleting the index it replaced failed) is not
 * abandoned: the new index already serves, so the catch-up and reconcile still run, the progress says the old
 * index was left, and that index stays an orphan for erasure to reach and `lethe index reconcile` to delete.
 * Told "the live index is unchanged" and stopped there, an operator would trust an index that no longer serves
 * and a new index that missed the writes of the copy.
 */
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReembedStart } from '../../../activities/reembed.activities.js';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { sampleEvent, sampleMemory } from '../../support/samples.js';

const failing = new Set<string>();
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    activityInterceptors: [
      () => ({
        inbound: {
          // The swap moves the alias, then its delete of the replaced index fails (for the tenants named).
          async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>) {
            const first = (input.args[0] ?? {}) as { tenant?: string; start?: ReembedStart };
            if (Context.current().info.activityType !== 'reembedSwap' || !failing.has(first.tenant ?? ''))
              return next(input);
            await next({ ...input, args: [{ ...first, start: { ...first.start!, previous: [] } }] });
            throw ApplicationFailure.nonRetryable('index delete refused', 'SearchIndexError');
          },
        },
      }),
    ],
  });
}, 60_000);
afterAll(() => app?.close());

describe('a re-embedding whose swap fails after the alias moved', () => {
  it('runs its catch-up and reconcile on the new index, and says the old index was left', async () => {
    const tenant = uniqueTenant();
    failing.add(tenant);
    const written = await app.request({
      method: 'POST',
      url: `/v1/tenants/${tenant}/batches`,
      token: await app.token(tenant, ['agent']),
      payload: { events: [sampleEvent()], memories: [sampleMemory()] },
    });
    expect(written.statusCode, written.body).toBe(201);
    const old = (await app.services.index.indexOf(tenant))!;
    const admin = await app.token(tenant, ['admin'], 'ops-1');
    const started = await app.request({ method: 'POST', url: `/v1/tenants/${tenant}/reembed`, token: admin });
    expect(started.statusCode, started.body).toBe(202);
    let status: { state: string; progress: Record<string, unknown> | null };
    do {
      await new Promise((resolve) => setTimeout(resolve, 250));
      status = (await app.request({ method: 'GET', url: `/v1/tenants/${tenant}/reembed`, token: admin })).json();
    } while (status.state === 'running');
    expect(status.state, JSON.stringify(status)).toBe('completed');
    expect(status.progress).toMatchObject({ phase: 'done', copied: 1, oldIndexLeft: true });
    const live = await app.services.index.indexOf(tenant);
    expect(live).not.toBe(old);
    expect(await app.services.index.orphans(tenant)).toEqual([old]);
  }, 240_000);
});
