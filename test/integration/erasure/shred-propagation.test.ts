/**
 * A destroyed data key dies in every process, not only in the one that destroyed it: two other OS processes, built
 * like the API and the worker (the same runtime, key vault and feed of destroyed keys), hold the keys of an erased
 * record and of a control record warm; an erasure run by this process's worker shreds the first. Each of them stops
 * opening it at its next read of the feed, and keeps opening the control record.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { testConfig } from '../../support/harness.js';
import { buildSubjectGraph, completeErasure, fileErasure, type SubjectGraph } from '../../support/erasure-fixture.js';
import { loadStackConfig } from '../../../stack/stack-config.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { ContentRecord } from '../../../src/substrate/crypto/content-cipher.js';

const kekDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-propagation-'));
const uri = new URL(testConfig().mongo.uri);
uri.pathname = `/lethe_propagation_${randomUUID().slice(0, 8)}`;
const isolated = { MONGODB_URI: uri.toString(), LETHE_KEK_FILE: path.join(kekDir, 'kek.json') };
/** The readers trust their memory for a minute without the feed: only the feed (200 ms) can stop them sooner. */
const reader = { ...isolated, LETHE_KEY_FEED_POLL_MS: '200', LETHE_KEY_CACHE_BOUND_MS: '60000' };

interface Reading {
  at: number;
  opens: string[];
  /** The answer to a request for a reading (SIGUSR2): from a read begun after the request. */
  answer?: true;
}

/** One reader process, and every line it has printed. */
function startReader(records: ContentRecord[]) {
  const repoDir = loadStackConfig().repoDir;
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(repoDir, 'test', 'support', 'key-reader.main.ts')],
    {
      cwd: repoDir,
      env: {
        ...process.env,
        LETHE_ENV: 'test',
        LOG_LEVEL: 'warn',
        ...reader,
        LETHE_READ_RECORDS: JSON.stringify(records),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const readings: Reading[] = [];
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) if (line.trim()) readings.push(JSON.parse(line) as Reading);
  });
  /** Waits, bounded by the test's timeout, for a reading that `done` accepts. */
  const until = async (done: (r: Reading) => boolean): Promise<Reading> => {
    for (;;) {
      const found = readings.find(done);
      if (found) return found;
      if (child.exitCode !== null) throw new Error(`the reader exited with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, readings, until };
}

describe('a destroyed data key, in two other processes that hold it warm', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  const readers: ReturnType<typeof startReader>[] = [];

  beforeAll(async () => {
    app = await startTestApp({ config: isolated });
    graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
  }, 240_000);
  afterAll(async () => {
    // Gone before their database is: a read under way would fail on it.
    await Promise.all(
      readers.map((r) =>
        r.child.exitCode !== null || r.child.signalCode !== null
          ? undefined
          : new Promise((resolve) => r.child.once('exit', resolve).kill('SIGTERM')),
      ),
    );
    await app?.runtime.db.dropDatabase().catch(() => undefined);
    await app?.close();
    fs.rmSync(kekDir, { recursive: true, force: true });
  });

  it('stops opening the erased record in each of them at their next read of the feed, and keeps the control', async () => {
    const erased = graph.memories[0]!;
    const control = graph.control.find((id) => id.startsWith('mem_'))!;
    const rows = await app.runtime.db
      .collection<ContentRecord>(Collections.memories)
      .find({ tenant: graph.tenant, _id: { $in: [erased, control] } })
      .toArray();
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.content).toMatch(/^lethe-sealed:v2:kp_/);
    readers.push(startReader(rows), startReader(rows));
    // Warm: each has unwrapped both keys and keeps them.
    for (const r of readers) await r.until((reading) => reading.opens.length === 2);

    const filedAt = new Date();
    const requestId = await fileErasure(app, graph.tenant, { subjectId: graph.subject });
    expect((await completeErasure(app, graph.tenant, requestId, 'extend')).state).toBe('completed');
    // The purge's first entry in the feed: the readers' times are measured from it (an upper bound for each key).
    const [destruction] = await app.runtime.db
      .collection<{ at: Date }>(Collections.dataKeyDestructions)
      .find({ at: { $gte: filedAt } })
      .sort({ at: 1 })
      .limit(1)
      .toArray();
    expect(destruction).toBeDefined();

    // The feed is how they learn it: one that missed the key would leave them opening it, and the timeout fails that.
    const stopped = await Promise.all(readers.map((r) => r.until((reading) => !reading.opens.includes(erased))));
    for (const s of stopped) expect(s.opens).toEqual([control]);
    const after = stopped.map((s) => s.at - destruction!.at.getTime());
    console.info(
      `shred propagation across processes: stopped opening ${after.join(' ms, ')} ms after the feed entry (poll 200 ms)`,
    );
    // Nothing opened it again afterwards: each answers a request for a reading with a read begun after the request,
    // and it prints every change before that answer.
    for (const r of readers) r.child.kill('SIGUSR2');
    const answers = await Promise.all(readers.map((r) => r.until((reading) => reading.answer === true)));
    readers.forEach((r, k) => {
      const since = r.readings.slice(r.readings.indexOf(stopped[k]!), r.readings.indexOf(answers[k]!) + 1);
      expect(since.map((reading) => reading.opens)).toEqual(since.map(() => [control]));
    });
  }, 120_000);
});
