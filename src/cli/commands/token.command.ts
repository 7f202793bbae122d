import type { Command } from 'commander';
import { loadConfig } from '../../config/load-config.js';
import { mintToken } from '../../governance/auth/tokens.js';
import { ROLES, type Role } from '../../governance/auth/principal.js';
import { CliError, ExitCode } from '../exit-codes.js';

export function registerTokenCommands(program: Command): void {
  const token = program.command('token').description('bearer tokens');
  token
    .command('mint')
    .description('issue a development token signed with LETHE_TOKEN_SECRET')
    .requiredOption('--tenant <tenant>', 'tenant id')
    .requiredOption('--principal <id>', 'principal id (a person or an agent)')
    .requiredOption('--roles <roles>', `comma-separated roles: ${ROLES.join(', ')}`)
    .option('--ttl <seconds>', 'lifetime in seconds', '3600')
    .action(async (options: { tenant: string; principal: string; roles: string; ttl: string }) => {
      const roles = options.roles.split(',').map((r) => r.trim()) as Role[];
      const unknown = roles.find((r) => !ROLES.includes(r));
      if (unknown)
        throw new CliError(`--roles: unknown role "${unknown}" (known: ${ROLES.join(', ')})`, ExitCode.usage);
      const ttl = Number(options.ttl);
      if (!Number.isInteger(ttl) || ttl <= 0)
        throw new CliError('--ttl: must be a positive whole number of seconds', ExitCode.usage);
      const config = loadConfig();
      const principal = { id: options.principal, tenant: options.tenant, roles };
      process.stdout.write(`${await mintToken(config.secrets.tokenSecret, principal, ttl)}\n`);
    });
}
