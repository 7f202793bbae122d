/** The CLI run in the test's own process, with no server: for argument handling and offline commands. */
import { Command } from 'commander';
import { vi } from 'vitest';
import { CliError } from '../../app/cli/exit-codes.js';

export interface InProcessRun {
  out: string;
  exitCode: number;
  error?: CliError;
}

/**
 * Runs `lethe <args>` over the commands `register` adds; returns what it printed, its exit code, or the CliError it
 * raised. The caller resets `process.exitCode` after each test.
 */
export async function runLetheInProcess(register: (program: Command) => void, args: string[]): Promise<InProcessRun> {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const program = new Command('lethe').option('--json').option('--tenant <tenant>').exitOverride();
  register(program);
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (error instanceof CliError) return { out, exitCode: error.exitCode, error };
    throw error;
  } finally {
    vi.restoreAllMocks();
  }
  return { out, exitCode: Number(process.exitCode ?? 0) };
}
