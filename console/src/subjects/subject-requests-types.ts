import type { AccessRequestView } from '../../../src/shared/api-contract/access.js';
import type { ErasureSummary } from '../../../src/shared/api-contract/erasure.js';
import type { RestrictionView } from '../../../src/shared/api-contract/restriction.js';

/** A correction as the API lists it (the fields the subject page shows). */
export interface CorrectionView {
  id: string;
  state: string;
  memoryId: string;
  dueAt: string;
  receivedAt: string;
  decidedBy: string | null;
  correctedId: string | null;
}

/** What `POST …/subject-rights/subject-requests` answers: a kind this token may not read is null, not empty. */
export interface SubjectRequests {
  erasure: ErasureSummary[] | null;
  access: AccessRequestView[] | null;
  rectification: CorrectionView[] | null;
  restrictions: RestrictionView[] | null;
  /** The rights this token may act on for the subject, as the API's role gate and policies answer. */
  may: Record<'erasure' | 'access' | 'rectification' | 'restriction' | 'objection' | 'lift', boolean>;
}
