/**
 * Copies of erased content under ids outside the erasure's closure. The verification's probes look across the whole
 * tenant (content hashes in MongoDB and the index, erased sentences in the index and through governed search); a
 * record they reach that the request neither erased, kept under a hold, nor is about to erase in another round is
 * a finding. A request with open findings is not certified until the DPO decides: extend the request to the
 * copies, or certify with the copies stated.
 */

/** Which probe reached a copy: `kind:target`, as in the certificate's probe results. */
export type FindingProbe =
  | 'content-hash:mongodb'
  | 'content-hash:elasticsearch'
  | 'text:mongodb'
  | 'text:elasticsearch'
  | 'text:api'
  | 'vector:elasticsearch';

export interface CopyFinding {
  id: string;
  kind: 'memory' | 'event';
  probes: FindingProbe[];
  /** `open` until the DPO decides; `extended`: erased by this request too; `stated`: certified with the copy named. */
  resolution: 'open' | 'extended' | 'stated';
}

export const FINDINGS_DECISIONS = ['extend', 'certify'] as const;
export type FindingsDecision = (typeof FINDINGS_DECISIONS)[number];

/**
 * Folds this verification's hits into what earlier rounds found. A decided finding keeps its decision; an open one
 * that no probe reaches any more (its record went meanwhile) is dropped; a new hit is open.
 */
export function mergeFindings(
  previous: readonly CopyFinding[],
  hits: ReadonlyMap<string, ReadonlySet<FindingProbe>>,
  kindOf: (id: string) => CopyFinding['kind'],
): CopyFinding[] {
  const merged = new Map<string, CopyFinding>();
  for (const finding of previous) {
    const now = hits.get(finding.id);
    if (finding.resolution === 'open' && !now) continue;
    const probes = new Set<FindingProbe>([...finding.probes, ...(now ?? [])]);
    merged.set(finding.id, { ...finding, probes: [...probes].sort() });
  }
  for (const [id, probes] of hits) {
    if (merged.has(id)) continue;
    merged.set(id, { id, kind: kindOf(id), probes: [...probes].sort(), resolution: 'open' });
  }
  return [...merged.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The DPO's decision applied to the open findings; decided ones stay as they were. */
export function decideFindings(findings: readonly CopyFinding[], decision: FindingsDecision): CopyFinding[] {
  const resolution = decision === 'extend' ? 'extended' : 'stated';
  return findings.map((f) => (f.resolution === 'open' ? { ...f, resolution } : f));
}

export const openFindings = (findings: readonly CopyFinding[] | undefined) =>
  (findings ?? []).filter((f) => f.resolution === 'open');

/**
 * The sentences of an erased text that a copy elsewhere would repeat: split at sentence ends, whitespace collapsed,
 * at least `minWords` words (shorter ones are too common to mean a copy). A text without such a sentence is its
 * own sample.
 */
export function sentenceSamples(text: string, minWords = 5): string[] {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  if (collapsed === '') return [];
  const sentences = collapsed
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.split(' ').length >= minWords);
  return sentences.length > 0 ? sentences : [collapsed];
}

/** A text as samples are compared: runs of whitespace collapsed, case ignored. */
const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();

/** Whether `text` repeats `sample`, compared as the samples are made (case and runs of whitespace ignored). */
export function repeats(text: string, sample: string): boolean {
  const needle = norm(sample);
  return needle !== '' && norm(text).includes(needle);
}

/** What two samples that `repeats` cannot tell apart have in common: one erased sentence, however often it occurs. */
export const sampleKey = norm;

/**
 * `repeats` for many samples at once: whether `text` repeats any of them. Each sample of three words or more is
 * looked up by its longest inner word (one with a space on each side, so a copy of the sample holds it as a word of
 * its own), and compared only with texts holding that word: the cost grows with the words of the text, not with
 * the number of samples. Shorter samples are compared with every text.
 */
export function repeatsAnyOf(samples: Iterable<string>): (text: string) => boolean {
  const byWord = new Map<string, string[]>();
  const short: string[] = [];
  for (const sample of samples) {
    const needle = norm(sample);
    if (needle === '') continue;
    const inner = needle.split(' ').slice(1, -1);
    if (inner.length === 0) {
      short.push(needle);
      continue;
    }
    const anchor = inner.reduce((a, b) => (b.length > a.length ? b : a));
    const group = byWord.get(anchor);
    if (group) group.push(needle);
    else byWord.set(anchor, [needle]);
  }
  return (text) => {
    const haystack = norm(text);
    if (short.some((needle) => haystack.includes(needle))) return true;
    for (const word of new Set(haystack.split(' '))) {
      if (byWord.get(word)?.some((needle) => haystack.includes(needle))) return true;
    }
    return false;
  };
}
