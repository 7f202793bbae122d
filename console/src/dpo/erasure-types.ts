/** What the erasure API returns (see app/api/routes/erasure.routes.ts). */
export interface ErasureSummary {
  id: string;
  state: string;
  selectorKind: string;
  legalGround: string;
  receivedAt: string;
  dueAt: string;
  extensionMonths: number;
  overdue: boolean;
  closedAt: string | null;
  holdIds: string[];
  certificateIds: string[];
}

export interface ErasureStepView {
  step: string;
  state: 'running' | 'done' | 'failed';
  startedAt: string;
  finishedAt: string | null;
  counts: Record<string, number>;
}

export interface ErasureDetail extends Omit<ErasureSummary, 'overdue' | 'closedAt'> {
  selectorHash: string;
  requester: string;
  steps: ErasureStepView[];
  progress: { purged: number; total: number };
  counts: Record<string, number>;
  note: string | null;
  /** Copies of erased content found outside the closure (ids only), and the DPO's decision on each. */
  findings?: { id: string; kind: string; probes: string[]; resolution: 'open' | 'extended' | 'stated' }[];
}

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
