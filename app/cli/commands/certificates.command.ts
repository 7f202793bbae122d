import type { Command } from 'commander';
import { loadConfig } from '../../../src/config/load-config.js';
import { parsePeriod } from '../../../src/governance/certificates/certificate-period.js';
import { loadSigningKey } from '../../../src/governance/certificates/signing.js';
import { DomainError } from '../../../src/shared/errors.js';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';

/** Parses `--from`/`--to`; a bad value is a usage error naming the option. */
export function periodOptions(options: { from?: string; to?: string }): { from?: Date; to?: Date } {
  try {
    return parsePeriod(options.from, options.to, { from: '--from', to: '--to' });
  } catch (error) {
    if (error instanceof DomainError) throw new CliError(error.message, ExitCode.usage);
    throw error;
  }
}

/** `lethe certificates export|get|public-key`. */
export function registerCertificateCommands(program: Command, context: () => CliContext): void {
  const certificates = program.command('certificates').description("the tenant's signed deletion certificates");

  certificates
    .command('export')
    .description(
      'write the certificates issued in a period as JSONL (one canonical certificate per line, chain order) to stdout',
    )
    .option('--from <date>', 'issued at or after (ISO 8601 date or date-time; a date alone is the whole day)')
    .option('--to <date>', 'issued at or before (a date alone is the whole day)')
    .action(async (options: { from?: string; to?: string }) => {
      const period = periodOptions(options);
      const ctx = context();
      const query = new URLSearchParams({
        ...(period.from ? { from: period.from.toISOString() } : {}),
        ...(period.to ? { to: period.to.toISOString() } : {}),
      });
      process.stdout.write(await ctx.api.getText(`/v1/tenants/${ctx.tenant}/certificates?${query.toString()}`));
    });

  certificates
    .command('get <certificateId>')
    .description('print one certificate (canonical JSON)')
    .option(
      '--anchored',
      'with its place in the audit log (entry, signed checkpoint, inclusion proof): lethe verify --log-key checks it alone',
    )
    .action(async (certificateId: string, options: { anchored?: boolean }) => {
      const ctx = context();
      const text = await ctx.api.getText(
        `/v1/tenants/${ctx.tenant}/certificates/${encodeURIComponent(certificateId)}${options.anchored ? '/anchored' : ''}`,
      );
      process.stdout.write(`${text}\n`);
    });

  certificates
    .command('public-key')
    .description(
      'print the Ed25519 public key (PEM) that verifies certificates, derived offline from LETHE_SIGNING_KEY_FILE',
    )
    .action(() => {
      const signer = loadSigningKey(loadConfig().secrets.signingKeyFile);
      const json = (program.opts() as { json?: boolean }).json;
      process.stdout.write(
        json ? `${JSON.stringify({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem })}\n` : signer.publicKeyPem,
      );
    });
}
