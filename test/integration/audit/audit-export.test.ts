import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../app/runtime.js';
import { exportAuditJsonl, verifyAuditJsonl } from '../../../src/governance/audit/audit-export.js';
import { auditEntryId, createMongoAuditLog } from '../../../src/governance/audit/mongo-audit-log.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import { testRuntime, uniqueId } from '../../support/harness.js';

let runtime: Runtime;
let tenant: string;
let lines: string[];

beforeAll(async () => {
  runtime = testRuntime();
  const log = createMongoAuditLog(runtime.db);
  await log.ensureIndexes();
  tenant = uniqueId('t');
  await log.appendMany(
    Array.from({ length: 12 }, (_, i) => ({
      tenant,
      actor: 'wf-erasure-1',
      action: i % 2 ? 'erasure.step' : 'memory.deleted',
      target: `mem_${i}`,
      outcome: 'ok' as const,
      details: { step: i, purged: i * 3 },
    })),
  );
  let text = '';
  for await (const line of exportAuditJsonl(createMongoAuditLog(runtime.db), tenant)) text += line;
  lines = text.split('\n').filter(Boolean);
});

afterAll(async () => {
  await runtime.close();
});

describe('audit export to JSONL and offline verification', () => {
  it('an export of the real log verifies offline', () => {
    expect(lines).toHaveLength(12);
    expect(verifyAuditJsonl(lines.join('\n'), { tenant })).toMatchObject({ ok: true, count: 12, lastSeq: 12 });
  });

  it('a flipped byte in one line is named as that entry', () => {
    const tampered = [...lines];
    tampered[6] = tampered[6]!.replace('"purged":18', '"purged":19');
    expect(tampered[6]).not.toBe(lines[6]);
    expect(verifyAuditJsonl(tampered.join('\n'))).toEqual({
      ok: false,
      firstBad: { seq: 7, index: 6, reason: 'hash mismatch: the entry was changed after it was sealed' },
    });
    // Any single byte, anywhere in the line, is caught at that line (as bad JSON, a bad field or a bad hash).
    for (let position = 0; position < lines[3]!.length; position += 7) {
      const line = lines[3]!;
      const flipped = [...lines];
      flipped[3] =
        line.slice(0, position) + String.fromCharCode(line.charCodeAt(position) ^ 1) + line.slice(position + 1);
      const result = verifyAuditJsonl(flipped.join('\n'));
      expect(result.ok, `byte ${position}`).toBe(false);
      if (!result.ok) expect(result.firstBad.index, `byte ${position}`).toBe(3);
    }
  });

  it('a dropped line is named at the entry after the gap', () => {
    const dropped = lines.filter((_, i) => i !== 4);
    expect(verifyAuditJsonl(dropped.join('\n'))).toEqual({
      ok: false,
      firstBad: { seq: 6, index: 4, reason: 'seq gap: expected seq 5, found 6 (entries missing or reordered)' },
    });
  });

  it('entries deleted from the database show as gaps in any export, not as a shorter honest chain', async () => {
    const log = createMongoAuditLog(runtime.db);
    const victim = uniqueId('t');
    await log.appendMany(
      Array.from({ length: 40 }, () => ({ tenant: victim, actor: 'system', action: 'x.y', outcome: 'ok' as const })),
    );
    // 32 is where a cold head search probes, so the stored chain looks 31 long to it.
    for (const seq of [20, 32]) {
      await runtime.db.collection(Collections.audit).deleteOne({ _id: auditEntryId(victim, seq) as never });
    }
    const cases: [{ fromSeq?: number; toSeq?: number }, number][] = [
      [{}, 21],
      [{ fromSeq: 18, toSeq: 22 }, 21],
      [{ fromSeq: 30, toSeq: 34 }, 33],
      [{ fromSeq: 25 }, 33],
    ];
    for (const [range, firstBadSeq] of cases) {
      let text = '';
      for await (const line of exportAuditJsonl(createMongoAuditLog(runtime.db), victim, range)) text += line;
      const result = verifyAuditJsonl(text, range.fromSeq ? { expectFromSeq: range.fromSeq } : {});
      expect(result, JSON.stringify(range)).toMatchObject({
        ok: false,
        firstBad: {
          seq: firstBadSeq,
          reason: `seq gap: expected seq ${firstBadSeq - 1}, found ${firstBadSeq} (entries missing or reordered)`,
        },
      });
    }
  });

  it('two swapped lines are named at the first of them', () => {
    const swapped = [...lines];
    [swapped[2], swapped[8]] = [swapped[8]!, swapped[2]!];
    expect(verifyAuditJsonl(swapped.join('\n'))).toMatchObject({ ok: false, firstBad: { seq: 9, index: 2 } });
  });
});
