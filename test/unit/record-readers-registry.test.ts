/**
 * The registry of code that reads records: every module of `src/`, `app/` and `activities/` that reads memories or events
 * from their stores is listed here, with the judge it asks (the read judge for what a reader is shown, the
 * processing judge for what a record is used for) or why it asks none (it locates, purges, verifies or maintains
 * storage for a duty that must reach every copy). A new module that reads records fails this test until it is
 * listed; a module listed as judged that stops asking its judge fails it too.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

type Entry = { judge: 'read' | 'processing' | 'both' } | { exempt: string };

const REGISTRY: Record<string, Entry> = {
  // Serving: the read judge.
  'app/api/routes/read.routes.ts': { judge: 'read' },
  'app/api/routes/review.routes.ts': { judge: 'read' },
  'src/retrieval/retrieval-service.ts': { judge: 'read' },
  'src/retrieval/search-service.ts': { judge: 'read' },
  // Processing: the processing judge.
  'activities/consolidation.activities.ts': { judge: 'processing' },
  'src/ingestion/admit-batch.ts': { judge: 'processing' },
  'src/ingestion/derivation-admission.ts': { judge: 'processing' },
  'src/governance/rights/access-package-builder.ts': { judge: 'processing' },
  'src/governance/rights/selector-preview.ts': { judge: 'processing' },
  'src/governance/rights/rectification-siblings.ts': { judge: 'processing' },
  'src/temporal/rectification-gateway.ts': { judge: 'processing' },
  // Duties that must reach every copy, whatever its marks.
  'src/governance/erasure/locate.ts': { exempt: 'erasure locates every record a selector names, to erase it' },
  'activities/erasure/erasure-context.ts': { exempt: 'erasure reads the records it is erasing' },
  'activities/erasure/purge.activities.ts': { exempt: 'the purge destroys every copy, whatever its marks' },
  'activities/erasure/tombstone.activities.ts': {
    exempt: 'the probes keep the sentences of every record being erased, whatever its marks',
  },
  'activities/erasure/verify.activities.ts': { exempt: 'verification probes for any copy left' },
  'activities/reembed.activities.ts': { exempt: 'index maintenance re-embeds every live record as stored' },
  'src/substrate/search/index-unless-erased.ts': { exempt: 'indexing writes what is stored; reads judge it' },
  'app/cli/commands/restore.command.ts': { exempt: 'a restore re-applies erasures to every restored record' },
  'activities/review.activities.ts': {
    exempt: 'a reviewer’s decision moves the record it names (a duty; the review routes ask the read judge)',
  },
  'activities/dispute.activities.ts': {
    exempt: 'dispute adjudication reads the disputed records and their corrections (a duty)',
  },
  'activities/rectification.activities.ts': {
    exempt: 'a rectification moves the records its filing chose (chosen by the processing judge at filing)',
  },
};

/** A call that reads memory or event records from their stores. */
const READS_RECORDS =
  /\b(memories|events)\.(get|getMany|pageByStatus|pageOfTenant|allBySubject|historyOf|factsOf|bySubjectAttribute)\(/;
const ASKS = {
  read: /\b(seeMemory|seeEvent|verdictOf)\(/,
  processing: /\b(mayProcess|partitionForAct|consolidationVerdict|citeRefusal)\(/,
};

function sources(dir: string): string[] {
  return readdirSync(path.join(repo, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    if (statSync(path.join(repo, rel)).isDirectory()) return sources(rel);
    return rel.endsWith('.ts') ? [rel.split(path.sep).join('/')] : [];
  });
}

const readers = [...sources('src'), ...sources('app'), ...sources('activities')].filter((f) =>
  READS_RECORDS.test(readFileSync(path.join(repo, f), 'utf8')),
);

describe('the registry of code that reads records', () => {
  it('lists every module that reads records, and only those', () => {
    expect(
      readers.filter((f) => !(f in REGISTRY)),
      'read records but are not registered',
    ).toEqual([]);
    expect(
      Object.keys(REGISTRY).filter((f) => !readers.includes(f)),
      'registered but read no records',
    ).toEqual([]);
  });

  it('finds each judged module asking its judge', () => {
    for (const [file, entry] of Object.entries(REGISTRY)) {
      if (!('judge' in entry)) continue;
      const text = readFileSync(path.join(repo, file), 'utf8');
      const judges = entry.judge === 'both' ? (['read', 'processing'] as const) : [entry.judge];
      for (const judge of judges) expect(ASKS[judge].test(text), `${file} asks the ${judge} judge`).toBe(true);
    }
  });

  it('gives a reason for every exemption', () => {
    for (const [file, entry] of Object.entries(REGISTRY))
      if ('exempt' in entry) expect(entry.exempt.length, file).toBeGreaterThan(20);
  });
});
