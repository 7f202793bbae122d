import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Command } from 'commander';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { buildSubjectGraph, fileErasure, waitForState, type SubjectGraph } from '../../support/erasure-fixture.js';
import { sampleEvent } from '../../support/samples.js';
import {
  reapplyErasures,
  registerRestoreCommands,
  type ReapplyReport,
} from '../../../app/cli/commands/restore.command.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { EventRecord, MemoryRecord } from '../../../src/substrate/model/records.js';

/**
 * A backup restored after an erasure brings erased records back; `lethe restore reapply-erasures` replays the
 * certified closures against the restored stores before traffic is served.
 */
describe('re-applying erasures after restoring a backup', () => {
  let app: TestApp;
  let graph: SubjectGraph;
  /** Copies of erased records taken before the erasure: what a backup from before it holds. */
  let backupMemories: MemoryRecord[];
  let backupEvents: EventRecord[];

  const reapply = () =>
    reapplyErasures(app.services, graph.tenant, { db: app.runtime.db, expunge: { attempts: 30, intervalMs: 1000 } });
  const restoreIntoMongo = async () => {
    await app.runtime.db.collection<MemoryRecord>(Collections.memories).insertMany(backupMemories);
    await app.runtime.db.collection<EventRecord>(Collections.events).insertMany(backupEvents);
  };
  const restoreIntoIndex = async () => {
    await app.services.index.upsert(graph.tenant, backupMemories, { refresh: true });
  };
  const stillThere = async () => ({
    mongo: [
      ...(await app.services.memories.getMany(graph.tenant, graph.memories)),
      ...(await app.services.events.getMany(graph.tenant, graph.events)),
    ].map((r) => r._id),
    index: (await app.services.index.probe(graph.tenant, { ids: graph.memories, text: graph.canary })).found,
  });

  beforeAll(async () => {
    app = await startTestApp();
    graph = await buildSubjectGraph(app, uniqueTenant(), `CANARY-${randomUUID()}`);
    backupMemories = await app.services.memories.getMany(graph.tenant, graph.memories);
    backupEvents = await app.services.events.getMany(graph.tenant, graph.events);
    expect(backupMemories).toHaveLength(4);
    expect(backupEvents).toHaveLength(2);
    const requestId = await fileErasure(app, graph.tenant, { subjectId: graph.subject });
    const settled = await waitForState(app, graph.tenant, requestId, ['completed', 'needs-operator', 'rejected']);
    expect(settled.state).toBe('completed');
    expect(await stillThere()).toEqual({ mongo: [], index: [] });
  }, 240_000);
  afterAll(async () => {
    await app?.close();
  });

  it('purges erased records a MongoDB and Elasticsearch restore brought back, from both stores', async () => {
    await restoreIntoMongo();
    await restoreIntoIndex();
    expect((await stillThere()).mongo).toHaveLength(6);
    const report = await reapply();
    expect(report).toMatchObject({
      certificates: 1,
      requests: 1,
      erasedIds: 7,
      restored: { memories: 4, events: 2 },
      purged: { memories: 4, events: 2, indexDocs: 4 },
      segmentsDeletedDocs: 0,
      warnings: [],
    });
    expect(report.tombstones.before).toBeGreaterThan(0);
    expect(await stillThere()).toEqual({ mongo: [], index: [] });
  });

  it('does nothing the second time', async () => {
    const report = await reapply();
    expect(report).toMatchObject({
      restored: { memories: 0, events: 0 },
      purged: { memories: 0, events: 0, lineage: 0, indexDocs: 0 },
      compacted: [],
    });
    expect(report.tombstones.written).toBe(0);
  });

  it('purges erased documents from a restored Elasticsearch snapshot alone', async () => {
    await restoreIntoIndex();
    expect((await stillThere()).index.length).toBeGreaterThan(0);
    const report = await reapply();
    expect(report).toMatchObject({ restored: { memories: 0, events: 0 }, purged: { indexDocs: 4 } });
    expect(await stillThere()).toEqual({ mongo: [], index: [] });
  });

  it('rewrites lost tombstones from the restored records, warns, and re-ingesting the erased event is refused again', async () => {
    // A MongoDB backup from before the erasure has the records back and none of the tombstones.
    await app.runtime.db.collection(Collections.tombstones).deleteMany({ tenant: graph.tenant });
    await restoreIntoMongo();
    const report = await reapply();
    expect(report.tombstones.before).toBe(0);
    expect(report.tombstones.after).toBeGreaterThan(0);
    expect(report.warnings.join('\n')).toContain('no tombstones');
    expect(await stillThere()).toEqual({ mongo: [], index: [] });
    const again = await app.request({
      method: 'POST',
      url: `/v1/tenants/${graph.tenant}/events`,
      token: await app.token(graph.tenant, ['admin']),
      payload: sampleEvent({
        subjects: [graph.subject],
        content: `Ana told support her codeword is ${graph.canary} and she lives in Porto.`,
      }),
    });
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json<{ error: { code: string } }>().error.code).toBe('Tombstoned');
  });

  it('runs as `lethe restore reapply-erasures --tenant T`, taking --tenant after the subcommand', async () => {
    await restoreIntoMongo();
    const program = new Command('lethe').option('--tenant <tenant>').option('--json').exitOverride();
    registerRestoreCommands(program);
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      await program.parseAsync(['restore', 'reapply-erasures', '--tenant', graph.tenant, '--json'], { from: 'user' });
    } finally {
      spy.mockRestore();
    }
    const report = JSON.parse(written.join('')) as ReapplyReport;
    expect(report).toMatchObject({
      tenant: graph.tenant,
      restored: { memories: 4, events: 2 },
      purged: { memories: 4, events: 2 },
    });
    expect(await stillThere()).toEqual({ mongo: [], index: [] });
  });
});
