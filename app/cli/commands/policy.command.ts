import fs from 'node:fs';
import type { Command } from 'commander';
import {
  checkPolicyDirectory,
  INPUT_FINDING_CODES,
  type PolicyCheckReport,
  type PolicyFinding,
} from '../../../src/governance/policy/policy-check.js';
import { CliError, ExitCode } from '../exit-codes.js';

function describeFinding(f: PolicyFinding): string {
  return `${f.file}: ${f.severity} [${f.code}] ${f.message}`;
}

function summary(report: PolicyCheckReport, errors: number, warnings: number): string {
  const counts = `${report.policies} policies, ${report.tests.passed} tests passed, ${report.tests.failed} failed`;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  return errors === 0
    ? `ok: ${counts}, ${plural(warnings, 'warning')}`
    : `FAILED: ${plural(errors, 'error')}, ${plural(warnings, 'warning')} (${counts})`;
}

/** The exit code for a report: usage when a file could not be read or parsed, refused on any other error. */
export function policyCheckExitCode(report: PolicyCheckReport): number {
  const errors = report.findings.filter((f) => f.severity === 'error');
  if (errors.some((f) => INPUT_FINDING_CODES.has(f.code))) return ExitCode.usage;
  return errors.length > 0 ? ExitCode.refused : ExitCode.ok;
}

export function registerPolicyCommands(program: Command): void {
  const policy = program.command('policy').description('the json-logic policies in policies/');

  policy
    .command('check')
    .description(
      'validate the policies (schema, unknown variables, rules that can never fire) and run their test tables ' +
        '(exit 2 when a file cannot be read or parsed, 5 on any error finding)',
    )
    .option('--dir <dir>', 'the policy directory (test tables in <dir>/tests)', 'policies')
    .action((options: { dir: string }) => {
      if (!fs.existsSync(options.dir) || !fs.statSync(options.dir).isDirectory()) {
        throw new CliError(`--dir: no such directory ${options.dir}`, ExitCode.usage);
      }
      const report = checkPolicyDirectory(options.dir);
      const errors = report.findings.filter((f) => f.severity === 'error').length;
      const warnings = report.findings.length - errors;
      const json = (program.opts() as { json?: boolean }).json;
      if (json) {
        process.stdout.write(`${JSON.stringify(report)}\n`);
      } else {
        for (const finding of report.findings) process.stdout.write(`${describeFinding(finding)}\n`);
        process.stdout.write(`${summary(report, errors, warnings)}\n`);
      }
      process.exitCode = policyCheckExitCode(report);
    });
}
