import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canTransition,
  CURRENT_STATUSES,
  MEMORY_STATUSES,
  nextStatuses,
  SERVABLE_STATUSES,
  type MemoryStatus,
} from '../../../src/shared/lifecycle.js';

/**
 * The lifecycle as ARCHITECTURE.md and the lifecycle issue state it: candidate → active → superseded,
 * active ⇄ disputed, disputes resolved by superseding or rejecting one side, candidate → rejected,
 * active → expired (retention), and erasure from every live state: → deleted → purged.
 */
const SPECIFIED: ReadonlyArray<readonly [MemoryStatus, MemoryStatus]> = [
  ['candidate', 'active'],
  ['candidate', 'rejected'],
  ['active', 'superseded'],
  ['active', 'disputed'],
  ['disputed', 'active'],
  ['disputed', 'superseded'],
  ['disputed', 'rejected'],
  ['active', 'expired'],
  ...MEMORY_STATUSES.filter((s) => s !== 'deleted' && s !== 'purged').map((s) => [s, 'deleted'] as const),
  ['deleted', 'purged'],
];

const status = fc.constantFrom(...MEMORY_STATUSES);

/** A walk that takes only transitions the table offers, choosing among them with the given picks. */
function walk(from: MemoryStatus, picks: readonly number[]): MemoryStatus[] {
  const path: MemoryStatus[] = [from];
  for (const pick of picks) {
    const options = nextStatuses(path.at(-1)!);
    if (options.length === 0) break;
    path.push(options[pick % options.length]!);
  }
  return path;
}

function reachable(from: MemoryStatus): Set<MemoryStatus> {
  const seen = new Set<MemoryStatus>();
  const queue = [...nextStatuses(from)];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (seen.has(next)) continue;
    seen.add(next);
    queue.push(...nextStatuses(next));
  }
  return seen;
}

const picks = fc.array(fc.nat(), { maxLength: 12 });

describe('the memory lifecycle transition table', () => {
  it('is exactly the specified lifecycle, and canTransition agrees with nextStatuses', () => {
    const table = MEMORY_STATUSES.flatMap((from) => nextStatuses(from).map((to) => `${from}→${to}`)).sort();
    expect(table).toEqual(SPECIFIED.map(([from, to]) => `${from}→${to}`).sort());
    fc.assert(
      fc.property(status, status, (from, to) => {
        expect(canTransition(from, to)).toBe(nextStatuses(from).includes(to));
      }),
    );
  });

  it('random walks from candidate, moving only where canTransition allows, follow the specified lifecycle', () => {
    const specified = new Set(SPECIFIED.map(([from, to]) => `${from}→${to}`));
    fc.assert(
      fc.property(fc.array(status, { maxLength: 40 }), (proposals) => {
        let here: MemoryStatus = 'candidate';
        for (const to of proposals) {
          if (!canTransition(here, to)) continue; // refused: the workflow raises an error and the status stays
          expect(specified.has(`${here}→${to}`)).toBe(true);
          here = to;
        }
      }),
    );
  });

  it('random walks from candidate take only legal transitions, and cycle only between active and disputed', () => {
    fc.assert(
      fc.property(picks, (choices) => {
        const path = walk('candidate', choices);
        for (let i = 1; i < path.length; i += 1) expect(canTransition(path[i - 1]!, path[i]!)).toBe(true);
        const revisited = path.filter((s, i) => path.indexOf(s) !== i);
        for (const s of revisited) expect(['active', 'disputed']).toContain(s);
      }),
    );
  });

  it('an illegal transition is refused, never a silent no-op: no status moves to itself', () => {
    for (const s of MEMORY_STATUSES) expect(canTransition(s, s)).toBe(false);
  });

  it('purged is terminal', () => {
    expect(nextStatuses('purged')).toEqual([]);
    fc.assert(
      fc.property(status, (to) => {
        expect(canTransition('purged', to)).toBe(false);
      }),
    );
  });

  it('every status but purged can be erased: it reaches deleted and then purged, directly', () => {
    fc.assert(
      fc.property(picks, (choices) => {
        const here = walk('candidate', choices).at(-1)!;
        if (here === 'purged') return;
        if (here !== 'deleted') expect(canTransition(here, 'deleted')).toBe(true);
        expect(canTransition('deleted', 'purged')).toBe(true);
        expect(reachable(here)).toContain('purged');
      }),
    );
  });

  it('after deletion the only way is purged: a deleted record is never live again', () => {
    expect(nextStatuses('deleted')).toEqual(['purged']);
    expect([...reachable('deleted')]).toEqual(['purged']);
  });

  it.each(['rejected', 'superseded', 'expired'] as const)('%s never returns to active', (from) => {
    expect(reachable(from).has('active')).toBe(false);
    fc.assert(
      fc.property(picks, (choices) => {
        expect(walk(from, choices).slice(1)).not.toContain('active');
      }),
    );
  });

  it('no status ever becomes a candidate again', () => {
    for (const from of MEMORY_STATUSES) expect(reachable(from).has('candidate')).toBe(false);
    fc.assert(
      fc.property(status, picks, (from, choices) => {
        expect(walk(from, choices).slice(1)).not.toContain('candidate');
      }),
    );
  });

  it('serves neither candidates, rejected, deleted nor purged records, and answers the present from active and disputed only', () => {
    for (const hidden of ['candidate', 'rejected', 'deleted', 'purged'] as const) {
      expect(SERVABLE_STATUSES).not.toContain(hidden);
    }
    expect([...CURRENT_STATUSES].sort()).toEqual(['active', 'disputed']);
    for (const s of CURRENT_STATUSES) expect(SERVABLE_STATUSES).toContain(s);
  });
});
