import type { Command } from 'commander';
import { decodeJwt } from 'jose';
import { loadConfig } from '../../config/load-config.js';
import { mintToken } from '../../governance/auth/tokens.js';
import { ROLES, TENANT_PATTERN, type Role } from '../../governance/auth/principal.js';
import { CliError, ExitCode } from '../exit-codes.js';

export function registerTokenCommands(program: Command): void {
  const token = program.command('token').description('bearer tokens');
  token
    .command('mint')
    .description('issue a development token signed with LETHE_TOKEN_SECRET')
    .option('--tenant <tenant>', 'tenant id (required)')
    .requiredOption('--principal <id>', 'principal id (a person or an agent)')
    .requiredOption('--roles <roles>', `comma-separated roles: ${ROLES.join(', ')}`)
    .option('--ttl <seconds>', 'lifetime in seconds', '3600')
    .action(async (options: { tenant?: string; principal: string; roles: string; ttl: string }) => {
      // The program's own --tenant takes the option wherever it is written on the line.
      const tenant = options.tenant ?? (program.opts() as { tenant?: string }).tenant;
      if (!tenant) throw new CliError('--tenant: required', ExitCode.usage);
      if (!TENANT_PATTERN.test(tenant)) throw new CliError(`--tenant: invalid tenant id ${tenant}`, ExitCode.usage);
      const roles = options.roles.split(',').map((r) => r.trim()) as Role[];
      const unknown = roles.find((r) => !ROLES.includes(r));
      if (unknown)
        throw new CliError(`--roles: unknown role "${unknown}" (known: ${ROLES.join(', ')})`, ExitCode.usage);
      const config = loadConfig();
      const ttl = Number(options.ttl);
      const max = config.tokens.maxTtlSeconds;
      if (!Number.isInteger(ttl) || ttl <= 0 || ttl > max)
        throw new CliError(
          `--ttl: must be a whole number of seconds from 1 to ${max} (LETHE_TOKEN_MAX_TTL_SECONDS)`,
          ExitCode.usage,
        );
      const principal = { id: options.principal, tenant, roles };
      const minted = await mintToken(config.secrets.tokenSecret, principal, ttl, config.tokens);
      const json = (program.opts() as { json?: boolean }).json;
      const expiresAt = new Date(Number(decodeJwt(minted).exp) * 1000).toISOString();
      process.stdout.write(
        json
          ? `${JSON.stringify({ token: minted, tenant, principal: principal.id, roles, expiresAt })}\n`
          : `${minted}\n`,
      );
    });
}
