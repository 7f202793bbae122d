/** What the review API returns (see app/api/routes/review.routes.ts). */
export interface QueueItem {
  type: 'sign-off' | 'dispute';
  id: string;
  kind?: string;
  namespace: string;
  recordedAt: string;
  reason?: string | null;
  writtenBy: string;
  memoryIds?: string[];
}

export interface Evidence {
  evidence: { eventIds: string[]; parentIds: string[]; derivationRule: string };
  writtenBy: string;
  content?: string;
}

export interface SignOffItem extends Evidence {
  id: string;
  kind: string;
  namespace: string;
  policyReason: string | null;
}

export interface DisputeRecord extends Evidence {
  id: string;
  view: 'content' | 'content-free';
  status: string;
  kind: string;
  validFrom: string;
  validTo: string | null;
  trustTier: string;
  confidence: number;
}

/** A side of a dispute the reader may not see (an erasure reached it, or a hold restricts it): its id only. */
export interface WithheldRecord {
  id: string;
  view: 'withheld';
}

export interface DisputeView {
  id: string;
  state: string;
  namespace: string;
  openedAt: string;
  writers: string[];
  records: (DisputeRecord | WithheldRecord)[];
}
