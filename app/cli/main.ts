#!/usr/bin/env node
/** `lethe` — the command line for agents' operators, DPOs, reviewers and auditors. */
import fs from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../../src/config/config.js';
import { createCliContext, type CliContext } from './context.js';
import { CliError, ExitCode } from './exit-codes.js';
import { registerTokenCommands } from './commands/token.command.js';
import { registerKeyCommands } from './commands/keys.command.js';
import { registerIngestCommand } from './commands/ingest.command.js';
import { registerSearchCommand } from './commands/search.command.js';
import { registerRetrieveCommand } from './commands/retrieve.command.js';
import { registerAuditCommands } from './commands/audit.command.js';
import { registerErasureCommands } from './commands/erasure.command.js';
import { registerRightsCommands } from './commands/rights.command.js';
import { registerAccessCommands } from './commands/access.command.js';
import { registerRectifyCommands } from './commands/rectify.command.js';
import { registerCertificateCommands } from './commands/certificates.command.js';
import { registerVerifyCommand } from './commands/verify.command.js';
import { registerPolicyCommands } from './commands/policy.command.js';
import { registerRestoreCommands } from './commands/restore.command.js';
import { registerReviewCommands } from './commands/review.command.js';
import { registerIndexCommands, registerReembedCommand } from './commands/reembed.command.js';

/** `--json` anywhere on the line: a failure is then one JSON object on stderr, as its success is on stdout. */
const jsonRequested = process.argv.slice(2).includes('--json');

/** The checkout's or the release's package.json: two levels above this file in both. */
const { version } = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const program = new Command('lethe')
  .description('Lethe: governed memory and provable erasure for AI agents')
  .version(`lethe ${version} on Node.js ${process.version}`, '-V, --version', 'the version, and the Node.js it runs on')
  .option('--api <url>', 'API base URL (LETHE_API_URL)')
  .option('--token <token>', 'bearer token (LETHE_TOKEN)')
  .option('--tenant <tenant>', 'tenant (defaults to the token’s)')
  .option('--json', 'machine-readable output')
  .exitOverride()
  // With --json, commander's own usage errors are reported below as JSON instead.
  .configureOutput({ writeErr: (s) => (jsonRequested ? undefined : process.stderr.write(s)) });

const context = (): CliContext => createCliContext(program.opts());
registerTokenCommands(program);
registerKeyCommands(program);
registerIngestCommand(program, context);
registerSearchCommand(program, context);
registerRetrieveCommand(program, context);
registerAuditCommands(program, context);
registerErasureCommands(program, context);
registerRightsCommands(program, context);
registerAccessCommands(program, context);
registerRectifyCommands(program, context);
registerCertificateCommands(program, context);
registerVerifyCommand(program, context);
registerPolicyCommands(program);
registerRestoreCommands(program);
registerReviewCommands(program, context);
registerReembedCommand(program, context);
registerIndexCommands(program, context);

function fail(message: string, exitCode: number): void {
  process.stderr.write(jsonRequested ? `${JSON.stringify({ error: { message, exitCode } })}\n` : `lethe: ${message}\n`);
  process.exitCode = exitCode;
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0) process.exitCode = ExitCode.ok;
    else if (jsonRequested) fail(error.message.replace(/^error: /, ''), ExitCode.usage);
    else process.exitCode = ExitCode.usage;
  } else if (error instanceof CliError) {
    fail(error.message, error.exitCode);
  } else if (error instanceof ConfigError) {
    fail(`configuration: ${error.message}`, ExitCode.usage);
  } else {
    fail((error as Error).message.split('\n')[0] ?? '', ExitCode.failure);
  }
}
