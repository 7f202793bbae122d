import { describe, expect, it } from 'vitest';
import {
  exportAuditJsonl,
  verifyAuditJsonl,
  verifyAuditJsonlStream,
} from '../../../src/governance/audit/audit-export.js';
import type { AuditEntry, AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { buildChain, seeds } from './chain-fixtures.js';

/** Just enough of a log to feed the exporter: entries from an array, honouring the range. */
function arrayLog(chain: AuditEntry[]): AuditLog {
  return {
    append: () => Promise.reject(new Error('read-only')),
    appendMany: () => Promise.reject(new Error('read-only')),
    head: () => Promise.resolve(chain.at(-1) ?? null),
    async *entries(_tenant, range = {}) {
      for (const e of chain) if (e.seq >= (range.fromSeq ?? 1) && e.seq <= (range.toSeq ?? Infinity)) yield e;
    },
  };
}

async function collect(lines: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const line of lines) text += line;
  return text;
}

describe('audit JSONL export and offline verification', () => {
  const chain = buildChain('acme', seeds(5));

  it('writes one canonical JSON line per entry, in chain order', async () => {
    const text = await collect(exportAuditJsonl(arrayLog(chain), 'acme'));
    const lines = text.split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[5]).toBe('');
    lines.slice(0, 5).forEach((line, i) => expect(line).toBe(canonicalJson(chain[i])));
  });

  it('verifies its own export, from text, from lines, and from a stream', async () => {
    const text = await collect(exportAuditJsonl(arrayLog(chain), 'acme'));
    const expected = { ok: true, count: 5, headHash: chain[4]!.hash, lastSeq: 5 };
    expect(verifyAuditJsonl(text)).toEqual(expected);
    expect(verifyAuditJsonl(text.split('\n'))).toEqual(expected);
    async function* lines() {
      yield* text.split('\n');
    }
    expect(await verifyAuditJsonlStream(lines(), { tenant: 'acme' })).toEqual(expected);
  });

  it('verifies a range export from its first seq and the hash before it', async () => {
    const text = await collect(exportAuditJsonl(arrayLog(chain), 'acme', { fromSeq: 3, toSeq: 4 }));
    expect(verifyAuditJsonl(text, { expectFromSeq: 3, expectPrevHash: chain[1]!.hash })).toMatchObject({
      ok: true,
      count: 2,
    });
  });

  it('tolerates blank lines and CRLF endings', () => {
    const text = `\n${chain.map((e) => canonicalJson(e)).join('\r\n\n')}\r\n`;
    expect(verifyAuditJsonl(text)).toMatchObject({ ok: true, count: 5 });
  });

  it('names a line that is not JSON without quoting it', () => {
    const lines = chain.map((e) => canonicalJson(e));
    lines[2] = lines[2]!.slice(0, -1);
    expect(verifyAuditJsonl(lines)).toEqual({
      ok: false,
      firstBad: { seq: 3, index: 2, reason: 'unreadable entry: not valid JSON' },
    });
  });
});
