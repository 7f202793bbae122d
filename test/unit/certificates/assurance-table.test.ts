/**
 * The table in docs/erasure-certificate.md of what each place in a certificate promises is the code's: every claim the erasure writes, on
 * either storage engine, with or without shredding, has its row there at its level, and no row names a place no
 * certificate holds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { assuranceClaims } from '../../../activities/erasure/assurance-claims.js';
import { COMPACTED } from '../../../activities/erasure/purge.activities.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { AssuranceClaim } from '../../../src/governance/certificates/certificate.js';

const PAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/erasure-certificate.md');
const INDEX = 'lethe-mem-t-0123456789ab-v1';
const OTHER = 'lethe-mem-t-0123456789ab-v2';

/** The table after the certificate section's heading: each row's places (its first column's code) and its level. */
function tableRows(): { places: string[]; level: string }[] {
  const text = fs.readFileSync(PAGE, 'utf8');
  const start = text.indexOf('# What a `complete` certificate promises');
  const lines = text.slice(start).split('\n');
  const first = lines.findIndex((l) => l.startsWith('| place'));
  const rows: { places: string[]; level: string }[] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    const [, place = '', level = ''] = line.split('|');
    rows.push({ places: [...place.matchAll(/`([^`]+)`/g)].map((m) => m[1]!), level: level.trim() });
  }
  return rows;
}

/** A claim's place as the table writes it: the index and the record collections by name, WiredTiger's beside PostgreSQL's. */
function tablePlace(claim: AssuranceClaim): string {
  const records = COMPACTED.filter((c) => c !== Collections.dataKeys).join(',');
  return claim.place
    .replace(`elasticsearch:${INDEX}`, 'elasticsearch:<index>')
    .replace(`elasticsearch:${OTHER}`, 'elasticsearch:<index>')
    .replace(records, '<collections>')
    .replace(/^mongodb:oplog\+journal/, 'postgresql:wal')
    .replace(/^mongodb:/, 'postgresql:');
}

describe('the table of certificate places in docs/erasure-certificate.md', () => {
  const shredding = { at: new Date('2026-12-01T00:00:00Z'), epoch: 2, liveEpochs: [1, 2], boundMs: 5000 };
  const kinds = [
    { ...shredding, kek: 'local-file', rotationEveryMs: 86_400_000 },
    { ...shredding, kek: 'aws-kms' },
  ];
  const configurations = (['postgresql', 'wiredtiger'] as const).flatMap((backend) =>
    [...kinds, undefined].flatMap((s) =>
      // Compactions shown to drop the rows, and not: both levels of each compacted store are in the table.
      [true, false].map((proven) =>
        assuranceClaims({
          backend,
          indexName: INDEX,
          otherIndices: [OTHER],
          probes: [],
          compacted: COMPACTED,
          ...(s ? { shredding: s } : {}),
          sealing: { records: 10, keys: s ? 7 : 0 },
          ...(proven ? { compactionProof: { checked: true }, probeCompactionProof: { checked: true } } : {}),
        }),
      ),
    ),
  );
  const rows = tableRows();

  it('has a row at the right level for every claim a certificate can hold', () => {
    expect(rows.length).toBeGreaterThan(5);
    for (const claims of configurations) {
      for (const claim of claims) {
        const row = rows.find((r) => r.places.includes(tablePlace(claim)));
        expect(row, `no row for ${claim.place}`).toBeDefined();
        expect(row!.level, claim.place).toContain(claim.level);
      }
    }
  });

  it('names no place that no certificate holds', () => {
    const held = new Set(configurations.flat().map(tablePlace));
    for (const row of rows) expect(held.has(row.places[0]!), row.places[0]).toBe(true);
  });
});
