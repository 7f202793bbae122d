/**
 * What each erasure step did, in one sentence a DPO reads, built from the step's counts alone (the raw counters stay
 * under "Details for operators"). Pure: the counts in, the sentence out; a count the step did not record reads as 0.
 */

type Counts = Record<string, number>;

/** "1 record", "2 records", "no records"; `plural` for the irregular ones ("memories"). */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  if (n === 0) return `no ${plural}`;
  return `${n} ${n === 1 ? singular : plural}`;
}

/** "a", "a and b", "a, b and c". */
function list(parts: string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

const n = (counts: Counts, key: string) => counts[key] ?? 0;

/** The records of the side collections the purge erased with them (`side:<collection>` counts), summed. */
function sideRecords(counts: Counts): number {
  return Object.entries(counts)
    .filter(([k]) => k.startsWith('side:'))
    .reduce((sum, [, v]) => sum + v, 0);
}

const SENTENCES: Record<string, (counts: Counts, holdIds: readonly string[]) => string> = {
  locate(c) {
    const located = n(c, 'located');
    if (located === 0) return 'Found no records the request names.';
    return `Found ${count(located, 'record')}: ${list([count(n(c, 'events'), 'event'), count(n(c, 'memories'), 'memory', 'memories')])}.`;
  },
  closure(c) {
    const derived = n(c, 'derived');
    const collateral = n(c, 'collateral');
    if (derived === 0) return `Nothing was derived from them: the request reaches ${count(n(c, 'total'), 'record')}.`;
    const others = collateral === 0 ? 'none about other people' : `${collateral} also about other people`;
    return `Followed lineage to ${count(derived, 'record')} derived from them (${others}): the request reaches ${count(n(c, 'total'), 'record')}.`;
  },
  authorise(c, holdIds) {
    if (n(c, 'allowed') === 0) return 'The erasure policy does not allow this request: nothing is erased.';
    const held = n(c, 'held');
    const toErase = `${count(n(c, 'toErase'), 'record')} to erase`;
    if (held === 0) return `Allowed by the erasure policy: ${toErase}, none under a legal hold.`;
    const holds = holdIds.length === 0 ? '' : ` (${holdIds.length === 1 ? 'hold' : 'holds'} ${list([...holdIds])})`;
    return `Allowed by the erasure policy: ${toErase}; ${count(held, 'record')} kept under legal hold${holds} until released.`;
  },
  tombstone(c) {
    const records = n(c, 'records');
    if (records === 0) return 'Nothing to mark: no record was left to erase.';
    return `Stopped serving ${count(records, 'record')} and left ${count(n(c, 'tombstones'), 'tombstone')} so they cannot be written again.`;
  },
  purge(c) {
    const side = sideRecords(c);
    const deleted = list([count(n(c, 'events'), 'event'), count(n(c, 'memories'), 'memory', 'memories')]);
    const also = [
      ...(n(c, 'keys') > 0 ? [`destroyed ${count(n(c, 'keys'), 'content key')}`] : []),
      ...(n(c, 'lineage') > 0 ? [`removed ${count(n(c, 'lineage'), 'lineage link')}`] : []),
      ...(side > 0
        ? [`erased ${count(side, 'related record')} (sign-offs, read traces, staged writes and the like)`]
        : []),
    ];
    return `Deleted ${deleted} for good${also.length > 0 ? `, ${list(also)}` : ''}.`;
  },
  expunge(c) {
    const left = n(c, 'deletedDocs');
    if (left === 0) return 'Rewrote the search index: no deleted entry is left on disk.';
    return `Rewriting the search index: ${count(left, 'deleted entry', 'deleted entries')} still on disk.`;
  },
  verify(c) {
    const probes = count(n(c, 'probes'), 'probe');
    const found = n(c, 'found');
    const relocated = n(c, 'relocated');
    const findings = n(c, 'findings');
    if (found === 0 && relocated === 0 && findings === 0)
      return `Checked with ${probes}: nothing of the erased records was found anywhere.`;
    const what = [
      ...(found > 0 ? [`${count(found, 'trace')} of the erased records`] : []),
      ...(relocated > 0 ? [`${count(relocated, 'record')} written about the subject since`] : []),
      ...(findings > 0 ? [`${count(findings, 'copy', 'copies')} under other ids, waiting for your decision`] : []),
    ];
    return `Checked with ${probes}: found ${list(what)}.`;
  },
};

/** The sentence for a step that is done, or null for a step this page has no sentence for. */
export function stepSentence(step: string, counts: Counts, holdIds: readonly string[] = []): string | null {
  return SENTENCES[step]?.(counts, holdIds) ?? null;
}
