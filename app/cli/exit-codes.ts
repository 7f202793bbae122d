/** The CLI's exit codes: scripts branch on these. */
export const ExitCode = {
  ok: 0,
  /** Something unexpected; the message says what. */
  failure: 1,
  /** Bad arguments or input: the message names the argument or field. */
  usage: 2,
  /** 401 or 403: not authenticated, or not allowed. */
  denied: 3,
  /** 404: no such record in this tenant. */
  notFound: 4,
  /** 409 or 422: refused by a rule (tombstone, lineage, hold, conflict). */
  refused: 5,
  /** A server could not be reached. */
  unavailable: 6,
  /** Verification found tampering or a broken chain. */
  verificationFailed: 7,
} as const;

export function exitCodeForStatus(status: number): number {
  if (status === 400) return ExitCode.usage;
  if (status === 401 || status === 403) return ExitCode.denied;
  if (status === 404) return ExitCode.notFound;
  if (status === 409 || status === 422) return ExitCode.refused;
  if (status === 502 || status === 503 || status === 504) return ExitCode.unavailable;
  return ExitCode.failure;
}

/** An error the CLI reports in one line and exits with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
