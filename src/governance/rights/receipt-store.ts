import type { Db } from 'mongodb';
import { Collections, findOwn, insertOnce } from '../../substrate/mongo/collections.js';
import type { RightsReceipt } from './receipt.js';

interface ReceiptDoc {
  _id: string;
  tenant: string;
  receipt: RightsReceipt;
}

/** One receipt per request, kept (ids and counts only) as certificates are. */
export interface ReceiptStore {
  /** Stores the request's receipt; a second one for the same request keeps the first (a retried issue). */
  put(receipt: RightsReceipt): Promise<RightsReceipt>;
  get(tenant: string, requestId: string): Promise<RightsReceipt | null>;
}

export function createMongoReceiptStore(db: Db): ReceiptStore {
  const receipts = db.collection<ReceiptDoc>(Collections.rightsReceipts);
  return {
    async put(receipt) {
      const { doc } = await insertOnce(receipts, { _id: receipt.requestId, tenant: receipt.tenant, receipt });
      return doc.receipt;
    },
    async get(tenant, requestId) {
      return (await findOwn(receipts, tenant, requestId))?.receipt ?? null;
    },
  };
}
