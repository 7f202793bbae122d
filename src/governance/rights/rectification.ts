/**
 * A data subject's right to rectification (GDPR Art. 16): the DPO files a correction of one memory with the corrected
 * content; from filing the record's accuracy is contested and it is not served as current (Art. 18(1)(a)). A
 * reviewer who neither wrote the record nor filed the correction decides. Approved, the corrected value becomes a new
 * record, the inaccurate one is superseded with its valid time closed, and every record derived from it is flagged
 * stale or erased as the rectification-derived policy says; the DPO may have the inaccurate value erased too, by an
 * erasure with its own certificate. Pure code.
 */
import { z } from 'zod';
import { plainString, UNSTORABLE_CHARACTERS } from '../../shared/plain-text.js';
import { sha256Hex } from '../../shared/sha256.js';
import { MAX_CONTENT_BYTES } from '../../substrate/model/records.js';

export const RectificationFilingSchema = z
  .strictObject({
    /** The client's idempotency key: filing again with it returns the same request. */
    requestKey: plainString(128),
    /** The record whose content is inaccurate; or else name the subject and the attribute whose current value it is. */
    memoryId: plainString(256).optional(),
    subjectId: plainString(256).optional(),
    attribute: plainString(128).optional(),
    /** The corrected content, as it should read. */
    content: z
      .string()
      .min(1)
      .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_CONTENT_BYTES, `must be at most ${MAX_CONTENT_BYTES} bytes`)
      .refine((s) => !UNSTORABLE_CHARACTERS.test(s), 'must not contain NUL or unpaired surrogates'),
    /** Erase the inaccurate value (and what was derived from it) rather than keep it in history. */
    eraseInaccurate: z.boolean().default(false),
  })
  .superRefine((f, ctx) => {
    const byAttribute = f.subjectId !== undefined || f.attribute !== undefined;
    if (f.memoryId !== undefined && byAttribute)
      ctx.addIssue({
        code: 'custom',
        path: ['memoryId'],
        message: 'name the record or its subject and attribute, not both',
      });
    else if (f.memoryId === undefined && !byAttribute)
      ctx.addIssue({ code: 'custom', path: ['memoryId'], message: 'required (or subjectId and attribute)' });
    else if (byAttribute && f.subjectId === undefined)
      ctx.addIssue({ code: 'custom', path: ['subjectId'], message: 'required with attribute' });
    else if (byAttribute && f.attribute === undefined)
      ctx.addIssue({ code: 'custom', path: ['attribute'], message: 'required with subjectId' });
  });
export type RectificationFiling = z.output<typeof RectificationFilingSchema>;

export const ExtensionSchema = z.strictObject({
  months: z.number().int().min(1).max(2),
  reason: plainString(2000),
});

/** Art. 12(3): a request's month may be extended by two further months, in all. */
export const MAX_EXTENSION_MONTHS = 2;

/** The due date after `months` in all of extension: one month from receipt, plus them. Pure. */
export function dueDateOf(receivedAt: Date, months: number): Date {
  const due = new Date(receivedAt);
  due.setUTCMonth(due.getUTCMonth() + 1 + months);
  return due;
}

export const RectificationDecisionSchema = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  reason: plainString(2000),
});
export type RectificationDecision = z.output<typeof RectificationDecisionSchema>['decision'];

/** `void`: the record was erased (or its corrected content shredded) before a decision could apply. */
export const RECTIFICATION_STATES = ['awaiting-review', 'applied', 'rejected', 'void'] as const;
export type RectificationState = (typeof RECTIFICATION_STATES)[number];

export interface RectificationRequest {
  _id: string;
  tenant: string;
  memoryId: string;
  /**
   * Other current records that stated the same value about the same subjects' attribute (see
   * `rectification-siblings.ts`): contested with the named one from filing, and once applied, those the correction
   * superseded. Absent on requests filed before corrections reached copies.
   */
  siblings?: string[];
  /**
   * Records derived by lineage from the named record and its copies when it was filed: contested with them, since a
   * view repeats what its inputs say, and released with them (on approval they are flagged stale or erased instead).
   * Absent on requests filed before contests followed lineage.
   */
  contestedDerived?: string[];
  /**
   * The corrected content's keyed hash (`content-hash.ts`; the content itself is sealed beside the request until it
   * is applied): kept for as long as the request, and what a re-filing under the same key is compared with; empty
   * once void (its record was erased). The plain SHA-256 on a request filed before keying.
   */
  contentHash: string;
  /** The key `contentHash` was made under; absent: plain, filed before keying. */
  hashKeyId?: string;
  eraseInaccurate: boolean;
  requester: string;
  requesterRoles: string[];
  /** Whoever wrote the record: none of them may decide. */
  writers: string[];
  receivedAt: Date;
  /** One month from receipt (Art. 12(3)), plus any extension. */
  dueAt: Date;
  /** Months the DPO extended the due date by (at most two in all, Art. 12(3)). */
  extensionMonths: number;
  extensionReasonHash: string | null;
  state: RectificationState;
  decidedBy: string | null;
  decidedAt: Date | null;
  /** Keyed hash of the reviewer's reason: the words are not kept. */
  reasonHash: string | null;
  /** The record holding the corrected value, once applied. */
  correctedId: string | null;
  /** Records derived from the inaccurate one: flagged stale, or handed to the erasure. */
  derived: { stale: string[]; erased: string[] };
  /** The erasure of the inaccurate value and of the derived records the policy erases, when there is one. */
  erasureRequestId: string | null;
  updatedAt: Date;
}

export const OPEN_STATES: ReadonlySet<RectificationState> = new Set(['awaiting-review']);

/** The id of the record that holds the corrected value: one per request, so an applying retry writes it once. */
export function correctedRecordId(requestId: string): string {
  return `mem_${requestId}`;
}

/** The id of the record that holds the corrected value in place of a sibling copy: one per request and copy. */
export function correctedCopyId(requestId: string, copyId: string): string {
  return `mem_${requestId}_${sha256Hex(copyId).slice(0, 16)}`;
}

/** Derived records one filing contests at most: more is refused, naming the count (nothing is marked). */
export const MAX_CONTESTED_DERIVED = 10_000;

/** Every record a request marks contested while it is open: the named one, its copies, what derives from them. */
export function contestedBy(request: Pick<RectificationRequest, 'memoryId' | 'siblings' | 'contestedDerived'>) {
  return [...new Set([request.memoryId, ...(request.siblings ?? []), ...(request.contestedDerived ?? [])])];
}
