/**
 * The abuse bench's hostile clients, in a process of their own (so that making the flood costs the server's event
 * loop nothing): started by `bench/abuse.bench.ts` with a plan in `LETHE_ABUSE_PLAN`, they run until its deadline
 * and print the statuses they got as one JSON line. Eight clients, two of each kind:
 * - flood: retrievals from one agent token on one tenant, 8 in flight each;
 * - worst-case: the verifier's worst case, one write at a time each;
 * - oversize: batches as large as the body limit takes, whose memory cites every event, one at a time each;
 * - unauthenticated: writes and reads naming random tenants (the honest one among them) with no token or a token
 *   signed with another secret, 8 in flight each.
 */
import { randomInt } from 'node:crypto';
import { flood, send, type StatusTally, countStatus } from './abuse-http.js';
import { honestBatch, oversizeBatch, worstCaseBatch } from './abuse-payloads.js';
import { PLAN_ENV, type HostilePlan } from './hostile-plan.js';
import { WORST_CASE_EVENT_BYTES, worstCaseEvidence } from '../../test/support/verifier-worst-case.js';

/** One write at a time until the deadline. */
async function oneAtATime(plan: HostilePlan, tally: StatusTally, kind: string, write: () => Promise<number>) {
  while (Date.now() < plan.until) countStatus(tally, kind, await write());
}

async function main(): Promise<void> {
  const plan = JSON.parse(process.env[PLAN_ENV] ?? '') as HostilePlan;
  const tally: StatusTally = {};
  const { baseUrl, until } = plan;
  const oversize = worstCaseEvidence(plan.oversize.events * WORST_CASE_EVENT_BYTES);
  const twice = <T>(client: () => Promise<T>) => [client(), client()];
  const batches = (tenant: string) => `/v1/tenants/${tenant}/batches`;
  await Promise.all([
    ...twice(() =>
      flood(baseUrl, tally, 'flood', 8, until, () => ({
        method: 'POST',
        path: `/v1/tenants/${plan.flood.tenant}/retrieve`,
        token: plan.flood.token,
        body: { query: 'where does the customer live' },
      })),
    ),
    ...twice(() =>
      oneAtATime(plan, tally, 'worst-case', async () => {
        const { tenant, token, subject, evidenceIds } = plan.worstCase;
        const body = worstCaseBatch(subject, evidenceIds);
        return (await send(baseUrl, { method: 'POST', path: batches(tenant), token, body })).status;
      }),
    ),
    ...twice(() =>
      oneAtATime(plan, tally, 'oversize', async () => {
        const { tenant, token, subject } = plan.oversize;
        const body = oversizeBatch(subject, oversize);
        return (await send(baseUrl, { method: 'POST', path: batches(tenant), token, body })).status;
      }),
    ),
    ...twice(() =>
      flood(baseUrl, tally, 'unauthenticated', 8, until, () => {
        const { tenants, badToken } = plan.unauthenticated;
        const tenant = tenants[randomInt(tenants.length)]!;
        const token = randomInt(2) === 0 ? badToken : undefined;
        return randomInt(2) === 0
          ? { method: 'POST', path: batches(tenant), token, body: honestBatch('subject-1', randomInt(1000)) }
          : { method: 'POST', path: `/v1/tenants/${tenant}/retrieve`, token, body: { query: 'anything' } };
      }),
    ),
  ]);
  process.stdout.write(`${JSON.stringify(tally)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`hostile clients failed: ${(error as Error).message}\n`);
  process.exit(1);
});
