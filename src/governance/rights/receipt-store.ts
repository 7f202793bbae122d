import type { Db } from 'mongodb';
import { Collections, findOwn, insertOnce } from '../../substrate/mongo/collections.js';
import { DomainError, ErrorType } from '../../shared/errors.js';
import type { LogAnchor } from '../audit/log-tree/log-anchor.js';
import type { LogAnchors } from '../audit/log-tree/log-anchors.js';
import { anchoredReceipt, type AnchoredReceipt } from './anchored-receipt.js';
import type { RightsReceipt } from './receipt.js';

interface ReceiptDoc {
  _id: string;
  tenant: string;
  receipt: RightsReceipt;
  /** Its entry under a checkpoint signed as it was issued; absent on receipts issued before anchors were kept. */
  logAnchor?: LogAnchor;
}

/** One receipt per request, kept (ids and counts only) as certificates are. */
export interface ReceiptStore {
  /**
   * Stores the request's receipt, with its entry's log anchor (a checkpoint is signed if none covers the entry yet);
   * a second one for the same request keeps the first, anchor included (a retried issue).
   */
  put(receipt: RightsReceipt): Promise<RightsReceipt>;
  get(tenant: string, requestId: string): Promise<RightsReceipt | null>;
  /**
   * The receipt with its place in the audit log; null when there is none. One kept without an anchor is proven under
   * the latest checkpoint, read only; a NotFound names one no published checkpoint covers yet.
   */
  anchored(tenant: string, requestId: string): Promise<AnchoredReceipt | null>;
}

export function createMongoReceiptStore(
  db: Db,
  deps: { logAnchors?: Pick<LogAnchors, 'anchorAt' | 'latestAt' | 'cosigned'> } = {},
): ReceiptStore {
  const receipts = db.collection<ReceiptDoc>(Collections.rightsReceipts);
  return {
    async put(receipt) {
      const { tenant, anchor } = receipt;
      // A retried issue keeps the first receipt: no checkpoint to sign for it.
      const kept = await findOwn(receipts, tenant, receipt.requestId);
      if (kept) return kept.receipt;
      const logAnchor = deps.logAnchors ? await deps.logAnchors.anchorAt(tenant, anchor.auditSeq) : undefined;
      if (logAnchor === null || (logAnchor && logAnchor.entry.hash !== anchor.auditHash))
        throw new DomainError(
          ErrorType.Conflict,
          `receipt ${receipt.requestId}: audit seq ${anchor.auditSeq} is not its entry`,
        );
      const { doc } = await insertOnce(receipts, {
        _id: receipt.requestId,
        tenant,
        receipt,
        ...(logAnchor ? { logAnchor } : {}),
      });
      return doc.receipt;
    },
    async get(tenant, requestId) {
      return (await findOwn(receipts, tenant, requestId))?.receipt ?? null;
    },
    async anchored(tenant, requestId) {
      const doc = await findOwn(receipts, tenant, requestId);
      if (!doc) return null;
      const logAnchor = doc.logAnchor ?? (await deps.logAnchors?.latestAt(tenant, doc.receipt.anchor.auditSeq)) ?? null;
      if (!logAnchor)
        throw new DomainError(
          ErrorType.NotFound,
          `receipt ${requestId}: no published checkpoint covers its audit entry yet`,
          'id',
        );
      return anchoredReceipt(doc.receipt, (await deps.logAnchors?.cosigned(logAnchor)) ?? logAnchor);
    },
  };
}
