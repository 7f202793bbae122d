/**
 * The witnesses an auditor requires of a checkpoint (`--witness-key`, repeatable, and `--min-cosignatures`), as
 * `lethe audit check-consistency` and `lethe verify` read them.
 */
import type { Command } from 'commander';
import type { WitnessPolicy } from '../../src/governance/audit/log-tree/consistency-check.js';
import { cosignatureVerifier } from '../../src/governance/audit/witness/cosignature.js';
import { CliError, ExitCode } from './exit-codes.js';

export interface WitnessOptions {
  witnessKey: string[];
  minCosignatures?: string;
}

/** Adds the two options to a command; `what` names the checkpoint the cosignatures must be on. */
export function withWitnessOptions(command: Command, what: string): Command {
  return command
    .option(
      '--witness-key <verifier-key>',
      "a witness's cosignature key you trust, <name>+<key id>+<key> (repeat for several)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option(
      '--min-cosignatures <n>',
      `how many of the --witness-key witnesses must have cosigned ${what} (default: all of them)`,
    );
}

/** The witnesses the auditor requires, from the options; a usage error names the option that does not add up. */
export function witnessPolicy(options: WitnessOptions): WitnessPolicy | undefined {
  const keys = options.witnessKey;
  if (keys.length === 0) {
    if (options.minCosignatures !== undefined)
      throw new CliError('--min-cosignatures: needs the witnesses, as --witness-key', ExitCode.usage);
    return undefined;
  }
  for (const key of keys) {
    try {
      cosignatureVerifier(key);
    } catch (error) {
      throw new CliError(`--witness-key: ${(error as Error).message}`, ExitCode.usage);
    }
  }
  const min = options.minCosignatures === undefined ? keys.length : Number(options.minCosignatures);
  if (!Number.isInteger(min) || min < 1 || min > keys.length)
    throw new CliError(`--min-cosignatures: a whole number from 1 to ${keys.length}`, ExitCode.usage);
  return { keys, min };
}
