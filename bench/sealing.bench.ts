/**
 * Sealing benchmark: `npm run bench:sealing [-- --keys N]` (default 100 000).
 *
 * Content sealed at rest against the same stores with sealing left out (a pass-through cipher, the baseline), side by
 * side in one run, on a database and a KEK keyring of the bench's own:
 *
 * - writes: 20 batches of 50 memories through `MemoryStore.insertMany` (what admission writes per batch);
 * - reads: `MemoryStore.getMany` of 1 000 records, with a cold key cache (a process that just started) and a warm one;
 * - a KEK rotation over N data keys (`lethe keys rotate`): the time to make the keys, and to re-wrap them all and
 *   destroy the old epoch.
 *
 * Tables to stdout, progress to stderr. The database and keyring are removed at the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createRuntime, type Runtime } from '../app/runtime.js';
import { loadConfig } from '../src/config/load-config.js';
import { rotateKeks } from '../src/substrate/crypto/kek-rotation.js';
import { createMongoMemoryStore } from '../src/substrate/memories/memory-store.js';
import { benchName, runBench } from './lib/bench-run.js';
import { memoryRecordFor } from './lib/bench-records.js';
import { unsealedCipher } from './lib/unsealed.js';
import { loadAverage, median, num, ratio, table, timed } from './lib/stack-report.js';

const BATCHES = 20;
const BATCH = 50;
const READ = 1000;
const ROUNDS = 5;
const KEY_CHUNK = 1000;

const progress = (message: string) => process.stderr.write(`bench:sealing: ${message}\n`);
const out = (text = '') => process.stdout.write(`${text}\n`);

function keyCount(): number {
  const at = process.argv.indexOf('--keys');
  const n = Number(at >= 0 ? process.argv[at + 1] : 100_000);
  if (!Number.isInteger(n) || n < 1000) throw new Error('bench:sealing: --keys must be an integer ≥ 1000');
  return n;
}

const sentence = (n: number) =>
  `Customer ${n} asked for the invoice of order ${n * 7} to be sent by post to the office in Porto, before Friday.`;

async function main(): Promise<void> {
  const keys = keyCount();
  const base = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-bench-sealing-'));
  const uri = new URL(base.mongo.uri);
  uri.pathname = `/${base.mongo.dbName}_bench_sealing`;
  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    MONGODB_URI: uri.toString(),
    LETHE_KEK_FILE: path.join(dir, 'kek.json'),
  };
  const runtimes: Runtime[] = [];
  const runtime = () => {
    const r = createRuntime(loadConfig(env), 'lethe-bench');
    runtimes.push(r);
    return r;
  };
  const primary = runtime();
  try {
    await primary.db.dropDatabase();
    await primary.cipher.vault.ensureIndexes();
    const sealed = createMongoMemoryStore(primary.db, primary.cipher);
    const plain = createMongoMemoryStore(primary.db, unsealedCipher(primary.cipher));
    await sealed.ensureIndexes();
    out(`## bench:sealing — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${loadAverage()}`);
    out();

    progress('writes');
    const writeMs = { sealed: [] as number[], plain: [] as number[] };
    const written = { sealed: [] as string[], plain: [] as string[] };
    for (let b = 0; b < BATCHES; b++) {
      // Alternated, so that drift on a shared machine falls on both sides.
      for (const side of b % 2 === 0 ? (['sealed', 'plain'] as const) : (['plain', 'sealed'] as const)) {
        const tenant = benchName(`seal-${side}`);
        const records = Array.from({ length: BATCH }, (_, i) =>
          memoryRecordFor(tenant, `mem_${randomUUID().replaceAll('-', '')}`, sentence(b * BATCH + i), [`s-${i % 17}`]),
        );
        const store = side === 'sealed' ? sealed : plain;
        writeMs[side].push((await timed(() => store.insertMany(records))).ms);
        written[side].push(...records.map((r) => r._id));
      }
    }

    progress('reads');
    const readMs = { sealedCold: [] as number[], sealedWarm: [] as number[], plain: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const fresh = runtime();
      await fresh.cipher.vault.ensureIndexes();
      const cold = createMongoMemoryStore(fresh.db, fresh.cipher);
      const plainReader = createMongoMemoryStore(fresh.db, unsealedCipher(fresh.cipher));
      const sealedIds = written.sealed.slice(0, READ);
      const plainIds = written.plain.slice(0, READ);
      readMs.plain.push((await timed(() => plainReader.getMany(benchName('seal-plain'), plainIds))).ms);
      const first = await timed(() => cold.getMany(benchName('seal-sealed'), sealedIds));
      if (first.value.length !== sealedIds.length) throw new Error(`read ${first.value.length} of ${sealedIds.length}`);
      readMs.sealedCold.push(first.ms);
      readMs.sealedWarm.push((await timed(() => cold.getMany(benchName('seal-sealed'), sealedIds))).ms);
    }
    const writeP = median(writeMs.plain);
    const readP = median(readMs.plain);
    out(`### Sealed vs plain (medians; ${BATCHES} batches of ${BATCH} written, ${READ} records read × ${ROUNDS})`);
    out();
    out(
      table(
        ['operation', 'sealed (ms)', 'plain (ms)', 'throughput ratio (plain time / sealed time)'],
        [
          [
            `insertMany of ${BATCH} memories`,
            num(median(writeMs.sealed)),
            num(writeP),
            ratio(writeP / median(writeMs.sealed)),
          ],
          [
            `getMany of ${READ}, key cache cold`,
            num(median(readMs.sealedCold)),
            num(readP),
            ratio(readP / median(readMs.sealedCold)),
          ],
          [
            `getMany of ${READ}, key cache warm`,
            num(median(readMs.sealedWarm)),
            num(readP),
            ratio(readP / median(readMs.sealedWarm)),
          ],
        ],
      ),
    );
    out();

    progress(`making ${keys} data keys`);
    const vault = primary.cipher.vault;
    const tenant = benchName('seal-keys');
    const made = await timed(async () => {
      for (let i = 0; i < keys; i += KEY_CHUNK) {
        const ids = Array.from(
          { length: Math.min(KEY_CHUNK, keys - i) },
          (_, j) => `mem_k${String(i + j).padStart(9, '0')}`,
        );
        await vault.keysFor(tenant, ids);
      }
    });
    progress('rotating');
    const rotation = await timed(() => rotateKeks(vault, vault.keks, { settleMs: 2000 }));
    out(`### KEK rotation over ${keys.toLocaleString('en-US')} data keys (plus the ${written.sealed.length} above)`);
    out();
    out(
      table(
        ['measure', 'value'],
        [
          ['keys made (s)', num(made.ms / 1000)],
          ['rotation: re-wrap all, settle 2 s, re-check, destroy old epoch (s)', num(rotation.ms / 1000)],
          ['keys re-wrapped', String(rotation.value.rewrapped)],
          [
            'epochs destroyed / kept',
            `${rotation.value.destroyed.join(',')} / ${rotation.value.kept.join(',') || '-'}`,
          ],
        ],
      ),
    );
    out();
    out(`(load at the end: ${loadAverage()})`);
    await primary.db.dropDatabase();
  } finally {
    await Promise.all(runtimes.map((r) => r.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void runBench(main);
