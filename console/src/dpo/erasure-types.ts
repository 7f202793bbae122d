/** What the erasure API returns: one contract, shared with the API's presenters and the CLI. */
export type {
  ErasureDetail,
  ErasureFindingView,
  ErasureStepView,
  ErasureSummary,
} from '../../../src/shared/api-contract/erasure.js';

/** The steps the workflow records, in the order it runs them; certification shows as the certificate itself. */
export const STEPS = ['locate', 'closure', 'authorise', 'tombstone', 'purge', 'expunge', 'verify'] as const;

/** States after which a request changes no more without someone acting. */
export const SETTLED = new Set(['completed', 'rejected', 'needs-operator', 'needs-dpo']);

export const LEGAL_GROUNDS: Record<string, string> = {
  'art17-1a': 'Art. 17(1)(a) — no longer necessary',
  'art17-1b': 'Art. 17(1)(b) — consent withdrawn',
  'art17-1c': 'Art. 17(1)(c) — objection',
  'art17-1d': 'Art. 17(1)(d) — unlawfully processed',
  'art17-1e': 'Art. 17(1)(e) — legal obligation',
  'art17-1f': 'Art. 17(1)(f) — child’s data (information society service)',
  'retention-expiry': 'Retention period expired',
  correction: 'Correction',
};
