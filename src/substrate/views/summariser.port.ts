/**
 * What turns the inputs of a view into its text. The default is extractive and deterministic (it runs offline and
 * says nothing its inputs did not); a model-backed summariser names its model and prompt version, which go into the
 * view's provenance and its idempotency key.
 */
export interface SummaryInput {
  id: string;
  content: string;
  validFrom: Date;
}

export interface Summariser {
  /** Goes into each view's provenance and key: a new version builds new views. */
  readonly modelVersion: string;
  readonly promptVersion: string | null;
  summarise(inputs: readonly SummaryInput[]): Promise<string>;
}
