/**
 * Access benchmark: `npm run bench:access [-- --records N]` (default 10 000).
 *
 * One data subject with N records (a fifth of them events, the rest memories each derived from one of those events,
 * with their lineage), beside another subject's 500: an access request for the subject (`services.workflows.access.file`,
 * the `accessRequest` workflow on a worker of the bench's own, timed from filing until the package is stored,
 * signed and sealed) against the baseline, `locate` and the lineage closure of the same selector alone. Three
 * rounds, alternating which goes first; medians and their ratio (aim: access ≤ 2× the baseline).
 *
 * On a database of its own, dropped at the end; packages expire after 1 s so their workflows finish.
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { DefaultLogger, NativeConnection, Runtime as TemporalRuntime } from '@temporalio/worker';
import { createRuntime } from '../app/runtime.js';
import { createServices } from '../app/services.js';
import { loadConfig } from '../src/config/load-config.js';
import { selectorReach } from '../src/governance/rights/selector-preview.js';
import { mapBounded } from '../src/substrate/mongo/collections.js';
import { createLetheWorker } from '../app/worker/worker.js';
import { benchName, runBench } from './lib/bench-run.js';
import { memoryRecordFor } from './lib/bench-records.js';
import { loadAverage, median, num, ratio, table, timed } from './lib/stack-report.js';

const OTHERS = 500;
const ROUNDS = 3;
const progress = (message: string) => process.stderr.write(`bench:access: ${message}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);

function recordCount(): number {
  const at = process.argv.indexOf('--records');
  const n = Number(at >= 0 ? process.argv[at + 1] : 10_000);
  if (!Number.isInteger(n) || n < 100) throw new Error('bench:access: --records must be an integer ≥ 100');
  return n;
}

async function main(): Promise<void> {
  TemporalRuntime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: 'ERROR' } } });
  const n = recordCount();
  const base = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const uri = new URL(base.mongo.uri);
  uri.pathname = `/${base.mongo.dbName}_bench_access`;
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'warn',
    MONGODB_URI: uri.toString(),
    LETHE_ACCESS_DELIVERY_SECONDS: '1',
  });
  const runtime = createRuntime(config, 'lethe-bench');
  const taskQueue = benchName('access');
  const services = createServices(runtime, { taskQueue });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  try {
    await runtime.db.dropDatabase();
    await services.ensureIndexes();
    await services.lineage.ensureIndexes();
    const worker = await createLetheWorker(runtime, { taskQueue, services, connection });
    const tenant = benchName('acc');
    const subject = 'bench-subject';
    out(`## bench:access — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${loadAverage()}`);
    out();

    progress(`writing ${n} records of the subject and ${OTHERS} of another`);
    const seeded = await timed(async () => {
      for (const [who, count] of [
        [subject, n],
        ['bench-other', OTHERS],
      ] as const) {
        const eventCount = Math.ceil(count / 5);
        const events = await mapBounded(
          Array.from({ length: eventCount }, (_, i) => i),
          16,
          async (i) =>
            (
              await services.events.record({
                tenant,
                namespace: 'crm',
                source: 'bench',
                externalId: `${who}-${i}`,
                content: `Call note ${i} about ${who}: asked for the invoice of order ${i * 7} by post.`,
                subjects: [who],
                sensitivity: 'internal',
                trustTier: 2,
                occurredAt: new Date('2026-01-01T00:00:00Z'),
                recordedBy: 'bench',
                scope: 'tenant',
              })
            ).event._id,
        );
        const memories = Array.from({ length: count - eventCount }, (_, i) => {
          const m = memoryRecordFor(
            tenant,
            `mem_${randomUUID().replaceAll('-', '')}`,
            `${who} wants invoice ${i} by post.`,
            [who],
          );
          const from = events[i % events.length]!;
          return { ...m, provenance: { ...m.provenance, eventIds: [from] } };
        });
        for (let i = 0; i < memories.length; i += 500) {
          const chunk = memories.slice(i, i + 500);
          await services.lineage.registerMany(
            tenant,
            chunk.map((m) => ({ child: m._id, inputs: m.provenance.eventIds })),
          );
          await services.memories.insertMany(chunk);
        }
      }
    });
    progress(`written in ${num(seeded.ms / 1000)} s`);

    const dpo = { id: 'bench-dpo', tenant, roles: ['dpo' as const] };
    const selector = { subjectId: subject };
    const baselineMs: number[] = [];
    const accessMs: number[] = [];
    let packaged = 0;
    let opened = 0;
    await worker.runUntil(async () => {
      const baseline = async () => {
        const { value, ms } = await timed(() =>
          selectorReach({ ...services, macs: services.tenantMacs }, tenant, selector),
        );
        if (value.wanted.length < n) throw new Error(`the closure reached ${value.wanted.length} of ${n}`);
        baselineMs.push(ms);
      };
      const access = async () => {
        const { ms, value: id } = await timed(async () => {
          const { request } = await services.workflows.access.file(dpo, { selector, requestKey: randomUUID() });
          for (;;) {
            const state = (await services.access.get(tenant, request._id))!;
            if (state.state === 'ready' || state.state === 'expired') {
              packaged = (state.counts.events ?? 0) + (state.counts.memories ?? 0);
              return request._id;
            }
            if (state.state === 'failed') throw new Error(`access ${request._id} failed`);
            await new Promise((r) => setTimeout(r, 100));
          }
        });
        accessMs.push(ms);
        // The stored package opens whole (its parts, each sealed apart) while its window lasts.
        const pkg = await services.access.getPackage(tenant, id);
        if (pkg && pkg.records.length !== n) throw new Error(`the stored package holds ${pkg.records.length} records`);
        if (pkg) opened++;
      };
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? [baseline, access] : [access, baseline];
        for (const run of order) await run();
        progress(
          `round ${round + 1}/${ROUNDS}: closure ${num(baselineMs.at(-1)! / 1000)} s, access ${num(accessMs.at(-1)! / 1000)} s`,
        );
      }
      if (packaged !== n) throw new Error(`the package holds ${packaged} records, not ${n}`);
      // Let the packages' delivery windows end, so their workflows finish on this worker.
      await new Promise((r) => setTimeout(r, 3000));
    });

    const b = median(baselineMs);
    const a = median(accessMs);
    out(`### Access for a subject with ${n} records (beside ${OTHERS} of another), medians of ${ROUNDS}`);
    out();
    out(
      table(
        ['measure', 'time (s)', 'access / closure'],
        [
          ['locate + lineage closure alone', num(b / 1000), ''],
          ['access request: filed → package signed and stored', num(a / 1000), ratio(a / b)],
        ],
      ),
    );
    out();
    out(
      `(records written in ${num(seeded.ms / 1000)} s; ${opened} of ${ROUNDS} packages read back whole within their 1 s window; load at the end ${loadAverage()})`,
    );
  } finally {
    await runtime.db.dropDatabase().catch(() => undefined);
    await connection.close();
    await runtime.close();
  }
}

await runBench(main);
