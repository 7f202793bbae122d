/**
 * What the audit log and the certificate store share as hash chains kept in MongoDB without transactions: each link's
 * `_id` is its tenant and its seq, so the primary key itself forbids two links at one seq, and the head is found by
 * `_id` equality lookups, which are fast on FerretDB where a sort is not.
 */

/** Digits of a seq in a link's `_id`: ids sort as seqs do, up to 10^15 links per tenant. */
const SEQ_DIGITS = 15;

/** A link's `_id`: `<tenant>:<seq, zero-padded>`. */
export function chainLinkId(tenant: string, seq: number): string {
  return `${tenant}:${String(seq).padStart(SEQ_DIGITS, '0')}`;
}

/**
 * The head of a chain, searched upward from a link known to exist (or from nothing): probe seq+1, +2, +4… until one
 * is missing, then bisect between the last found and the first missing. A known link is usually the head itself:
 * one probe. Links are never removed from the middle, so "seq exists" is monotone and the search is exact.
 */
export async function findChainHead<Link extends { seq: number }>(
  bySeq: (seq: number) => Promise<Link | null>,
  known: Link | null,
): Promise<Link | null> {
  let low = known;
  let lowSeq = known?.seq ?? 0;
  let step = 1;
  let missing: number;
  for (;;) {
    const probe = await bySeq(lowSeq + step);
    if (!probe) {
      missing = lowSeq + step;
      break;
    }
    low = probe;
    lowSeq = probe.seq;
    step *= 2;
  }
  while (missing - lowSeq > 1) {
    const mid = lowSeq + Math.floor((missing - lowSeq) / 2);
    const probe = await bySeq(mid);
    if (probe) {
      low = probe;
      lowSeq = mid;
    } else missing = mid;
  }
  return low;
}
