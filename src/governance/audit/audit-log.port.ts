/** Values an audit entry may carry: ids, keyed hashes, counts, codes — never content or personal data. */
export type AuditValue = string | number | boolean | null;

export interface AuditEntryInput {
  tenant: string;
  /** Principal id, `system`, or a workflow id. */
  actor: string;
  /** What happened, dotted: `event.ingested`, `memory.created`, `access.refused`, `erasure.completed`. */
  action: string;
  /** The opaque id of the record acted on, if any. */
  target?: string | null;
  outcome: 'ok' | 'refused' | 'error';
  details?: Record<string, AuditValue>;
  /**
   * Makes the append idempotent: a retried append with the same key returns the entry already written.
   * Keyed by workflow id + step + target where a workflow appends.
   */
  idempotencyKey?: string;
}

/** One link of a tenant's hash chain. */
export interface AuditEntry {
  tenant: string;
  seq: number;
  at: string;
  actor: string;
  action: string;
  target: string | null;
  outcome: 'ok' | 'refused' | 'error';
  details: Record<string, AuditValue>;
  idempotencyKey: string;
  prevHash: string;
  /** SHA-256 (hex) of the RFC 8785 canonical form of every other field. */
  hash: string;
}

/** The append-only, hash-chained audit log; one unbroken chain per tenant. */
export interface AuditLog {
  append(entry: AuditEntryInput): Promise<AuditEntry>;
  /**
   * Appends a batch in chain order (contiguous unless another writer interleaves); returns the entries in input
   * order. Idempotent per entry: an input whose key is already written yields the entry already written.
   */
  appendMany(entries: AuditEntryInput[]): Promise<AuditEntry[]>;
  /** Entries of one tenant in chain order, optionally from/to sequence numbers (inclusive). */
  entries(tenant: string, range?: { fromSeq?: number; toSeq?: number }): AsyncIterable<AuditEntry>;
  head(tenant: string): Promise<AuditEntry | null>;
}
