/**
 * What the erasure routes answer, as the API sends it: the presenters are typed by these shapes, and the DPO console and
 * the CLI read them from here. A shape changed here changes for all three, and the type checker finds every consumer.
 * Ids, states, dates and counts only: never a selector's value or a record's content.
 */

/** One step of an erasure, as the request's status shows it. */
export interface ErasureStepView {
  step: string;
  state: 'running' | 'done' | 'failed';
  startedAt: string;
  finishedAt: string | null;
  counts: Record<string, number>;
}

/** A copy of erased content found outside the closure: its id, kind, the probes that reached it, the DPO's decision. */
export interface ErasureFindingView {
  id: string;
  kind: string;
  probes: string[];
  resolution: 'open' | 'extended' | 'stated';
}

/** One line of the DPO's list: the clock and where the request stands, without steps or selector. */
export interface ErasureSummary {
  id: string;
  state: string;
  selectorKind: string;
  legalGround: string;
  receivedAt: string;
  dueAt: string;
  extensionMonths: number;
  overdue: boolean;
  /** When a finished request last changed (its closing); null while it is open. */
  closedAt: string | null;
  holdIds: string[];
  certificateIds: string[];
}

/** A request's status: its steps with timestamps and counts, its progress, and what its certificate stated. */
export interface ErasureDetail extends Omit<ErasureSummary, 'overdue' | 'closedAt'> {
  selectorHash: string;
  requester: string;
  steps: ErasureStepView[];
  progress: { purged: number; total: number };
  counts: Record<string, number>;
  note: string | null;
  exposure?: ExposureStatement;
  findings: ErasureFindingView[];
}

/**
 * Whether the erased memories had reached agents before they were erased: retrievals that returned any of them
 * and prompts they were reported in, with the first and last times. Counts and times only.
 */
export interface ExposureStatement {
  retrievals: number;
  /** Retrievals by route (`retrieve`, `search`, `memory`, `event`); absent on older certificates and when none. */
  byRoute?: Partial<Record<'retrieve' | 'search' | 'memory' | 'event', number>>;
  prompts: number;
  firstRetrievedAt?: string;
  lastRetrievedAt?: string;
  firstExposedAt?: string;
  lastExposedAt?: string;
}
