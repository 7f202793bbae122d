import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import { verifyChain } from '../../../src/governance/audit/audit-chain.js';
import type { AuditEntry, AuditEntryInput, AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import { createMongoAuditLog, type MongoAuditLog } from '../../../src/governance/audit/mongo-audit-log.js';
import { testRuntime, uniqueId } from '../../support/harness.js';

let runtime: Runtime;
/** Appenders racing from separate processes win one seq per round trip; a loaded 2-core machine needs the margin. */
const CONTENDED_TIMEOUT_MS = 180_000;

beforeAll(async () => {
  runtime = testRuntime();
  await createMongoAuditLog(runtime.db).ensureIndexes();
});

afterAll(async () => {
  await runtime.close();
});

/** A log instance of its own, as another worker process would have (no shared in-memory head or queue). */
const newLog = (): MongoAuditLog => createMongoAuditLog(runtime.db);

const input = (tenant: string, n: number, idempotencyKey?: string): AuditEntryInput => ({
  tenant,
  actor: 'system',
  action: 'memory.created',
  target: `mem_${n}`,
  outcome: 'ok',
  details: { n, stage: 'test' },
  ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
});

async function readAll(
  log: AuditLog,
  tenant: string,
  range?: { fromSeq?: number; toSeq?: number },
): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const entry of log.entries(tenant, range)) out.push(entry);
  return out;
}

describe('MongoDB audit log', () => {
  it('starts a tenant chain at seq 1 from the genesis hash and links each entry to the previous one', async () => {
    const tenant = uniqueId('t');
    const log = newLog();
    await expect(log.append({ ...input(tenant, 3), details: { 'a.b': 1 } })).rejects.toMatchObject({
      type: 'ValidationError',
      field: 'details',
    });
    expect(await log.head(tenant)).toBeNull();
    const first = await log.append(input(tenant, 1));
    const second = await log.append(input(tenant, 2));
    expect(first).toMatchObject({ tenant, seq: 1, prevHash: '0'.repeat(64), target: 'mem_1', details: { n: 1 } });
    expect(second).toMatchObject({ seq: 2, prevHash: first.hash });
    expect(await newLog().head(tenant)).toEqual(second);
    expect(verifyChain(await readAll(newLog(), tenant), { tenant })).toMatchObject({ ok: true, count: 2 });
  });

  it(
    'eight concurrent appenders in separate processes, fifty appends each, leave one unbroken chain of 400',
    async () => {
      const tenant = uniqueId('t');
      const appenders = Array.from({ length: 8 }, () => newLog());
      const written = await Promise.all(
        appenders.map(async (log, a) => {
          const mine: AuditEntry[] = [];
          for (let i = 0; i < 50; i++) mine.push(await log.append(input(tenant, a * 1000 + i)));
          return mine;
        }),
      );
      const chain = await readAll(newLog(), tenant);
      expect(verifyChain(chain, { tenant })).toEqual({
        ok: true,
        count: 400,
        headHash: chain[399]!.hash,
        lastSeq: 400,
      });
      expect(chain.map((e) => e.seq)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
      // Every append came back with the entry that is in the chain at its seq.
      for (const entry of written.flat()) expect(chain[entry.seq - 1]).toEqual(entry);
      expect(new Set(written.flat().map((e) => e.seq)).size).toBe(400);
    },
    CONTENDED_TIMEOUT_MS,
  );

  it('four hundred concurrent appends through one instance are group-committed into one unbroken chain', async () => {
    const tenant = uniqueId('t');
    const log = newLog();
    const written = await Promise.all(Array.from({ length: 400 }, (_, i) => log.append(input(tenant, i))));
    expect(new Set(written.map((e) => e.seq)).size).toBe(400);
    expect(verifyChain(await readAll(newLog(), tenant), { tenant })).toMatchObject({ ok: true, count: 400 });
  });

  it('a retried append with the same idempotency key is written once and returns the entry already written', async () => {
    const tenant = uniqueId('t');
    const first = await newLog().append(input(tenant, 1, 'wf-1:step-1:mem_1'));
    await newLog().append(input(tenant, 2));
    const retried = await newLog().append(input(tenant, 1, 'wf-1:step-1:mem_1'));
    expect(retried).toEqual(first);
    // Retries racing each other from separate processes still write it once.
    const racing = await Promise.all(
      Array.from({ length: 6 }, () => newLog().append(input(tenant, 3, 'wf-1:step-2:mem_3'))),
    );
    expect(new Set(racing.map((e) => e.hash)).size).toBe(1);
    const chain = await readAll(newLog(), tenant);
    expect(chain).toHaveLength(3);
    expect(verifyChain(chain, { tenant }).ok).toBe(true);
  });

  it('appendMany writes a batch contiguously in input order, and a retry of it appends only what is missing', async () => {
    const tenant = uniqueId('t');
    const log = newLog();
    const batch = Array.from({ length: 10 }, (_, i) => input(tenant, i, `batch-1:${i}`));
    const first = await log.appendMany(batch);
    expect(first.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(first.map((e) => e.target)).toEqual(batch.map((b) => b.target));

    // A retry after a partial failure: the first ten are written, the last five are not; a key repeats inside it.
    const retry = [
      ...batch,
      ...Array.from({ length: 5 }, (_, i) => input(tenant, 10 + i, `batch-1:${10 + i}`)),
      batch[0]!,
    ];
    const second = await newLog().appendMany(retry);
    expect(second.slice(0, 10)).toEqual(first);
    expect(second.slice(10, 15).map((e) => e.seq)).toEqual([11, 12, 13, 14, 15]);
    expect(second[15]).toEqual(first[0]);

    // An already-written key in the middle of a batch: the new entries around it still chain.
    const mixed = await newLog().appendMany([input(tenant, 90, 'new-a'), batch[4]!, input(tenant, 91, 'new-b')]);
    expect(mixed.map((e) => e.seq)).toEqual([16, 5, 17]);
    expect(verifyChain(await readAll(newLog(), tenant), { tenant })).toMatchObject({ ok: true, count: 17 });
  });

  it(
    'appendMany from concurrent appenders interleaves batches but leaves one unbroken chain',
    async () => {
      const tenant = uniqueId('t');
      const appenders = Array.from({ length: 6 }, () => newLog());
      const results = await Promise.all(
        appenders.map(async (log, a) => {
          const out: AuditEntry[][] = [];
          for (let round = 0; round < 4; round++) {
            out.push(
              await log.appendMany(Array.from({ length: 20 }, (_, i) => input(tenant, a * 1000 + round * 100 + i))),
            );
            out.push([await log.append(input(tenant, a * 1000 + round * 100 + 99))]);
          }
          return out;
        }),
      );
      const chain = await readAll(newLog(), tenant);
      expect(verifyChain(chain, { tenant })).toMatchObject({ ok: true, count: 6 * 4 * 21 });
      for (const batch of results.flat()) {
        // In chain order within each batch, and each returned entry is the stored one.
        batch.forEach((entry, i) => {
          if (i > 0) expect(entry.seq).toBeGreaterThan(batch[i - 1]!.seq);
          expect(chain[entry.seq - 1]).toEqual(entry);
        });
      }
    },
    CONTENDED_TIMEOUT_MS,
  );

  it('streams a seq range, inclusive, in chain order, whether it reads the whole chain or a slice', async () => {
    const tenant = uniqueId('t');
    await newLog().appendMany(Array.from({ length: 30 }, (_, i) => input(tenant, i)));
    const range = await readAll(newLog(), tenant, { fromSeq: 11, toSeq: 20 });
    expect(range.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, i) => 11 + i));
    expect((await readAll(newLog(), tenant, { fromSeq: 29 })).map((e) => e.seq)).toEqual([29, 30]);
    expect((await readAll(newLog(), tenant, { fromSeq: 5, toSeq: 6 })).map((e) => e.seq)).toEqual([5, 6]);
    expect(await readAll(newLog(), tenant, { fromSeq: 31 })).toEqual([]);
    expect(await readAll(newLog(), uniqueId('t'))).toEqual([]);
  });

  it('refuses an invalid entry before writing anything of its batch', async () => {
    const tenant = uniqueId('t');
    const log = newLog();
    await expect(log.append({ ...input(tenant, 1), tenant: 'Not A Tenant' })).rejects.toMatchObject({
      type: 'ValidationError',
      field: 'tenant',
    });
    await expect(
      log.appendMany([input(tenant, 1), { ...input(tenant, 2), details: { bad: Number.NaN } }]),
    ).rejects.toMatchObject({ type: 'ValidationError', field: 'entries.1.details.bad' });
    await expect(log.append({ ...input(tenant, 3), details: { 'a.b': 1 } })).rejects.toMatchObject({
      type: 'ValidationError',
      field: 'details',
    });
    expect(await log.head(tenant)).toBeNull();
  });
});
