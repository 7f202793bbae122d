#!/usr/bin/env node
/** `lethe` — the command line for agents' operators, DPOs, reviewers and auditors. */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/config.js';
import { createCliContext, type CliContext } from './context.js';
import { CliError, ExitCode } from './exit-codes.js';
import { registerTokenCommands } from './commands/token.command.js';
import { registerIngestCommand } from './commands/ingest.command.js';
import { registerSearchCommand } from './commands/search.command.js';
import { registerAuditCommands } from './commands/audit.command.js';
import { registerErasureCommands } from './commands/erasure.command.js';
import { registerCertificateCommands } from './commands/certificates.command.js';
import { registerVerifyCommand } from './commands/verify.command.js';
import { registerPolicyCommands } from './commands/policy.command.js';
import { registerRestoreCommands } from './commands/restore.command.js';
import { registerReviewCommands } from './commands/review.command.js';

const program = new Command('lethe')
  .description('Lethe: governed memory and provable erasure for AI agents')
  .option('--api <url>', 'API base URL (LETHE_API_URL)')
  .option('--token <token>', 'bearer token (LETHE_TOKEN)')
  .option('--tenant <tenant>', 'tenant (defaults to the token’s)')
  .option('--json', 'machine-readable output')
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

const context = (): CliContext => createCliContext(program.opts());
registerTokenCommands(program);
registerIngestCommand(program, context);
registerSearchCommand(program, context);
registerAuditCommands(program, context);
registerErasureCommands(program, context);
registerCertificateCommands(program, context);
registerVerifyCommand(program);
registerPolicyCommands(program);
registerRestoreCommands(program);
registerReviewCommands(program, context);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  } else if (error instanceof CliError) {
    process.stderr.write(`lethe: ${error.message}\n`);
    process.exitCode = error.exitCode;
  } else if (error instanceof ConfigError) {
    process.stderr.write(`lethe: configuration: ${error.message}\n`);
    process.exitCode = ExitCode.usage;
  } else {
    process.stderr.write(`lethe: ${(error as Error).message.split('\n')[0]}\n`);
    process.exitCode = ExitCode.failure;
  }
}
