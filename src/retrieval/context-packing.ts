/**
 * Packs admissible memories into an agent's context budget. Coverage-greedy with a redundancy penalty (MMR):
 * each step takes the candidate with the best `λ·relevance − (1−λ)·similarity to what is already packed`, among
 * those that still fit; current authoritative records (`active`) come before disputed and historical ones; a
 * disputed record and its admissible counterparts go in together or not at all. Pure code.
 */

export interface PackCandidate {
  id: string;
  /** Fused retrieval score; only the order among candidates matters. */
  score: number;
  status: string;
  content: string;
  /** Ids of the records this one is in open dispute with. */
  disputedWith: readonly string[];
}

export interface Packed<T extends PackCandidate> {
  items: (T & { tokens: number })[];
  usedTokens: number;
  /** Admissible candidates left out because they did not fit. */
  leftOut: number;
}

/** A conservative token estimate (≈ 4 characters a token, never below one per word). */
export function estimateTokens(text: string): number {
  const words = text.trim() === '' ? 0 : text.trim().split(/\s+/).length;
  return Math.max(1, Math.ceil(text.length / 4), words);
}

const LAMBDA = 0.7;
/** Status tiers: what holds now first. */
const TIER: Record<string, number> = { active: 0, disputed: 1 };

function terms(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}

export function packContext<T extends PackCandidate>(candidates: readonly T[], budgetTokens: number): Packed<T> {
  const byId = new Map(candidates.map((c) => [c.id, c]));
  const tokens = new Map(candidates.map((c) => [c.id, estimateTokens(c.content)]));
  const bag = new Map(candidates.map((c) => [c.id, terms(c.content)]));
  const top = Math.max(...candidates.map((c) => c.score), 0) || 1;
  const left = new Set(candidates.map((c) => c.id));
  const packed: (T & { tokens: number })[] = [];
  let used = 0;

  /** The group a candidate enters with: itself and its admissible counterparts still left. */
  const groupOf = (c: T): T[] => [c, ...c.disputedWith.flatMap((id) => (left.has(id) ? [byId.get(id)!] : []))];
  const cost = (group: readonly T[]) => group.reduce((n, c) => n + tokens.get(c.id)!, 0);

  while (left.size > 0) {
    let best: { group: T[]; value: number; tier: number } | undefined;
    for (const id of left) {
      const c = byId.get(id)!;
      const group = groupOf(c);
      if (used + cost(group) > budgetTokens) continue;
      const redundancy = Math.max(0, ...packed.map((p) => jaccard(bag.get(c.id)!, bag.get(p.id)!)));
      const value = LAMBDA * (c.score / top) - (1 - LAMBDA) * redundancy;
      const tier = TIER[c.status] ?? 2;
      if (!best || tier < best.tier || (tier === best.tier && value > best.value)) best = { group, value, tier };
    }
    if (!best) break;
    for (const c of best.group) {
      left.delete(c.id);
      const t = tokens.get(c.id)!;
      used += t;
      packed.push({ ...c, tokens: t });
    }
  }
  return { items: packed, usedTokens: used, leftOut: left.size };
}
