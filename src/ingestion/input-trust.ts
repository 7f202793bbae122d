/**
 * What a memory inherits from its inputs at admission, pure: its taints, and whether it must wait in quarantine.
 *
 * - **Taint** passes down lineage and is never lifted: a memory is tainted `external-content` when an input event
 *   came from outside the conversation (a tool's output, a fetched document, a connector) or an input memory is so
 *   tainted, and `low-trust` when an input is of the lowest trust tier or so tainted.
 * - **Quarantine** holds a memory that reads external content directly, whose content or cited event content
 *   reads like an instruction to an agent, or whose subject's attribute keeps changing value (an anomaly), as a
 *   candidate for a reviewer: no agent reads it until it is promoted.
 *   A memory derived from a promoted record is tainted but not quarantined again: a reviewer has read that content.
 *
 * The instruction scan is a list of patterns, not a classifier: it catches the common shapes of prompt injection
 * in English (overriding instructions, reassigning the agent's role, addressing its system prompt, hiding things
 * from the user, sending data out, changing policies or settings). It is a tripwire that sends content to a
 * person, so a miss costs a reviewer nothing and a false alarm costs one review.
 */
import type { EventOrigin, TaintReason } from '../substrate/model/records.js';
import type { Claim } from '../substrate/memories/claim-lookup.js';
import { isWhitespace } from '../governance/derivation/text-cues.js';
import { compileWordWindow, isWordCode, wordsOf, type Word, type WordWindow } from './word-window.js';

/** The lowest trust tier (unverified source). */
export const LOWEST_TRUST_TIER = 0;

const SENDING = ['send', 'forward', 'post', 'upload', 'email', 'e-mail', 'transmit'];

/**
 * Up to four words, then `to`, whitespace and an e-mail address (`[\w.+-]+@[\w-]+\.[\w.]+`), each word separated
 * from the one before by whitespace; `next` is the index of the first of those words.
 */
function toAnAddress(text: string, words: readonly Word[], next: number): boolean {
  for (let to = next; to <= next + 4; to++) {
    const word = words[to];
    if (word?.spaced !== true) return false;
    if (word.text === 'to' && addressAfter(text, word.end)) return true;
  }
  return false;
}

const isLocalPartCode = (c: number) => isWordCode(c) || c === 0x2e || c === 0x2b || c === 0x2d; // [\w.+-]
const isDomainCode = (c: number) => isWordCode(c) || c === 0x2d; // [\w-]

/** Where the run of code units that `accepts` takes, starting at `from`, ends. */
function runEnd(text: string, from: number, accepts: (c: number) => boolean): number {
  let at = from;
  while (at < text.length && accepts(text.charCodeAt(at))) at++;
  return at;
}

/** Whether whitespace, then an address (`[\w.+-]+@[\w-]+\.[\w.]`), starts at `from`. */
function addressAfter(text: string, from: number): boolean {
  const local = runEnd(text, from, isWhitespace);
  if (local === from) return false;
  const at = runEnd(text, local, isLocalPartCode);
  if (at === local || text[at] !== '@') return false;
  const dot = runEnd(text, at + 1, isDomainCode);
  if (dot === at + 1 || text[dot] !== '.') return false;
  const c = text.charCodeAt(dot + 1);
  return isWordCode(c) || c === 0x2e;
}

// Every pattern runs over untrusted text of up to 32 KB, so each must match in linear time: no two parts of a pattern
// may match the same run of characters (`\s+…\s*` over a run of spaces costs the square of its length), and every
// repetition that can follow another is either bounded or starts with a character the other cannot match.
// `npm run check:redos` holds every regular expression in src/ to this. A verb followed within a few words by its
// object (`send … to https://`, `disable … policy`) is a word window instead: `(?:\w+\s+){0,N}` in a pattern
// backtracks over every run of words, and a checker cannot show it linear.
const INSTRUCTION_SCAN: readonly { kind: string; patterns: readonly RegExp[]; windows?: readonly WordWindow[] }[] = [
  {
    kind: 'instruction-override',
    patterns: [
      /\b(?:ignore|disregard|forget|override)\s+(?:(?:all|any|the|your)\s+)*(?:(?:previous|prior|earlier|above|preceding|existing)\s*)?(?:instructions?|rules|guidelines|directives|prompts?)\b/i,
    ],
  },
  {
    kind: 'role-reassignment',
    patterns: [
      /\b(?:you\s+are\s+now|from\s+now\s+on,?\s+you\s+(?:are|will|must)|pretend\s+(?:to\s+be|you\s+are)|act\s+as\s+(?:an?\s+)?(?:unrestricted|different|new)|new\s+instructions\s*:)/i,
    ],
  },
  {
    kind: 'system-prompt',
    patterns: [/\bsystem\s+prompt\b|\bdeveloper\s+mode\b|\bjailbreak\b/i, /<\s*(?:\/\s*)?system\s*>|\[\s*system\s*\]/i],
  },
  {
    kind: 'concealment',
    patterns: [
      /\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to|let)\s+(?:the\s+)?(?:user|customer|human|operator|them)\b/i,
    ],
  },
  {
    // Sending anything to a web endpoint, or everything (or what an agent holds: data, conversations, memories,
    // credentials) to an address. An ordinary errand to an address ("forward the invoice to accounts@…") is not.
    kind: 'exfiltration',
    patterns: [],
    windows: [
      // send … (to) https://
      {
        verbs: SENDING,
        within: 5,
        trailing: ['to'],
        objects: ['http', 'https'],
        followedBy: (text, words, next) => text.startsWith('://', words[next - 1]!.end),
      },
      // send … everything … to someone@example.org
      {
        verbs: SENDING,
        within: 4,
        objects: [
          ...['all', 'every', 'everything', 'entire', 'whole', 'full', 'data', 'details', 'history'],
          ...['conversation', 'conversations', 'chat', 'chats', 'memory', 'memories', 'credential', 'credentials'],
          ...['password', 'passwords', 'key', 'keys', 'token', 'tokens', 'contact', 'contacts', 'customer list'],
        ],
        followedBy: toAnAddress,
      },
    ],
  },
  {
    kind: 'policy-change',
    patterns: [],
    windows: [
      // disable … policy
      {
        verbs: ['disable', 'turn off', 'bypass', 'override'],
        within: 2,
        leading: ['the', 'your', 'all'],
        objects: [
          ...['policy', 'policies', 'retention', 'permission', 'permissions', 'safety', 'guardrail', 'guardrails'],
          ...['filter', 'filters', 'security', 'audit', 'auditing', 'logging'],
        ],
      },
      // set … policy to
      {
        verbs: ['change', 'set', 'lower', 'raise', 'update'],
        within: 2,
        leading: ['the', 'your'],
        objects: ['policy', 'policies', 'permission', 'permissions', 'guardrail', 'guardrails'],
        followedBy: (_, words, next) => words[next]?.text === 'to' && words[next].spaced,
      },
    ],
  },
];

const COMPILED_SCAN = INSTRUCTION_SCAN.map(({ kind, patterns, windows = [] }) => ({
  kind,
  patterns,
  windows: windows.map(compileWordWindow),
}));

/** Kinds of instruction-like text in `text`, in the list's order (empty when none). */
export function instructionLikeKinds(text: string): string[] {
  let words: Word[] | undefined;
  return COMPILED_SCAN.filter(
    ({ patterns, windows }) =>
      patterns.some((p) => p.test(text)) || windows.some((w) => w.test(text, (words ??= wordsOf(text)))),
  ).map(({ kind }) => kind);
}

/** What admission knows of one input of a memory. */
export type MemoryInputFacts =
  | { kind: 'event'; origin: EventOrigin; trustTier: number; content: string }
  | { kind: 'memory'; taint: readonly TaintReason[]; trustTier: number };

export interface InheritedTrust {
  taint: TaintReason[];
  /** Reason codes; empty: admitted as the impact policy says. */
  quarantine: string[];
}

/** A subject's attribute whose written value changed this many times within the window is flapping. */
export const FLAP_CHANGES = 3;
export const FLAP_WINDOW_MS = 7 * 24 * 3600_000;

/**
 * `anomaly:attribute-flapping` when the claims about the memory's subject and attribute written within the window
 * (whatever their status now: a refused or superseded attempt counts), in the order written and followed by the new
 * content, change value `FLAP_CHANGES` times or more — a value pushed back and forth (A, B, A, B), the shape of a
 * false fact pressed in over several sessions — and the new content is not the attribute's established value: the
 * one written most often within the window (the earliest of those, on a tie). So the true value restated while an
 * attribute is under attack is admitted, and the value pressed against it waits for a reviewer. A history of
 * successive values (A, B, C) is not flapping. Null otherwise.
 */
export function flappingAnomaly(claims: readonly Claim[], contentHash: string, now: Date): string | null {
  const since = now.getTime() - FLAP_WINDOW_MS;
  const written = claims
    .filter((c) => c.recordedAt.getTime() >= since)
    .sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime())
    .map((c) => c.contentHash);
  const times = new Map<string, number>();
  for (const hash of written) times.set(hash, (times.get(hash) ?? 0) + 1);
  // Map order is first-written order, so the earliest of the most written wins a tie.
  let established: string | undefined;
  for (const [hash, n] of times) if (established === undefined || n > times.get(established)!) established = hash;
  written.push(contentHash);
  let changes = 0;
  for (let k = 1; k < written.length; k++) if (written[k] !== written[k - 1]) changes++;
  return changes >= FLAP_CHANGES && contentHash !== established ? 'anomaly:attribute-flapping' : null;
}

export function inheritedTrust(
  content: string,
  inputs: readonly MemoryInputFacts[],
  anomalies: readonly string[] = [],
): InheritedTrust {
  const taint = new Set<TaintReason>();
  const quarantine = new Set<string>(anomalies);
  const scanned = [content];
  for (const input of inputs) {
    if (input.trustTier <= LOWEST_TRUST_TIER) taint.add('low-trust');
    if (input.kind === 'memory') {
      for (const t of input.taint) taint.add(t);
      continue;
    }
    scanned.push(input.content);
    if (input.origin !== 'interaction') {
      taint.add('external-content');
      quarantine.add(`external-content:${input.origin}`);
    }
  }
  for (const text of scanned) for (const kind of instructionLikeKinds(text)) quarantine.add(`instruction-like:${kind}`);
  return { taint: [...taint].sort(), quarantine: [...quarantine].sort() };
}
