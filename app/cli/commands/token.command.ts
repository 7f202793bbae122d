import type { Command } from 'commander';
import { decodeJwt } from 'jose';
import { loadConfig } from '../../../src/config/load-config.js';
import { mintToken, type TokenSigningKey } from '../../../src/governance/auth/tokens.js';
import { loadTokenSigningKey, publicJwkOf } from '../../../src/governance/auth/token-keys.js';
import { purposesProblem, ROLES, TENANT_PATTERN, type Role } from '../../../src/governance/auth/principal.js';
import { CliError, ExitCode } from '../exit-codes.js';

/** A revoked entry outlives any token that could carry its jti: the longest lifetime, plus the clock skew allowed. */
const REVOCATION_MARGIN_SECONDS = 60;

export function registerTokenCommands(program: Command): void {
  const token = program.command('token').description('bearer tokens');
  token
    .command('mint')
    .description(
      'issue a token: EdDSA with --key and --kid (the kid of its public key in the API key set), else HS256 with LETHE_TOKEN_SECRET (development only)',
    )
    .option('--tenant <tenant>', 'tenant id (required)')
    .requiredOption('--principal <id>', 'principal id (a person or an agent)')
    .requiredOption('--roles <roles>', `comma-separated roles: ${ROLES.join(', ')}`)
    .option(
      '--purposes <purposes>',
      "comma-separated context purposes the bearer may read for (e.g. support,personalisation); duties come with the roles. Absent: every purpose the read policy allows the roles, and an objection to any of them binds the bearer's reads",
    )
    .option('--ttl <seconds>', 'lifetime in seconds', '3600')
    .option('--key <pem>', 'Ed25519 private key file (PKCS#8 PEM) to sign with')
    .option('--kid <id>', "the key's id in the API key set (required with --key)")
    .action(
      async (options: {
        tenant?: string;
        principal: string;
        roles: string;
        purposes?: string;
        ttl: string;
        key?: string;
        kid?: string;
      }) => {
        // The program's own --tenant takes the option wherever it is written on the line.
        const tenant = options.tenant ?? (program.opts() as { tenant?: string }).tenant;
        if (!tenant) throw new CliError('--tenant: required', ExitCode.usage);
        if (!TENANT_PATTERN.test(tenant)) throw new CliError(`--tenant: invalid tenant id ${tenant}`, ExitCode.usage);
        const roles = options.roles.split(',').map((r) => r.trim()) as Role[];
        const unknown = roles.find((r) => !ROLES.includes(r));
        if (unknown)
          throw new CliError(`--roles: unknown role "${unknown}" (known: ${ROLES.join(', ')})`, ExitCode.usage);
        const purposes =
          options.purposes === undefined
            ? undefined
            : options.purposes
                .split(',')
                .map((p) => p.trim())
                .filter((p) => p !== '');
        const problem = purposes === undefined ? null : purposesProblem(purposes);
        if (problem) throw new CliError(`--purposes: ${problem}`, ExitCode.usage);
        if (!!options.key !== !!options.kid)
          throw new CliError('--key and --kid: give both or neither', ExitCode.usage);
        const config = loadConfig();
        const ttl = Number(options.ttl);
        const max = config.tokens.maxTtlSeconds;
        if (!Number.isInteger(ttl) || ttl <= 0 || ttl > max)
          throw new CliError(
            `--ttl: must be a whole number of seconds from 1 to ${max} (LETHE_TOKEN_MAX_TTL_SECONDS)`,
            ExitCode.usage,
          );
        let signingKey: TokenSigningKey;
        if (options.key && options.kid) signingKey = loadTokenSigningKey(options.key, options.kid);
        else if (config.tokens.hs256Secret) signingKey = config.tokens.hs256Secret;
        else throw new CliError('--key: required (HS256 tokens are minted only in development)', ExitCode.usage);
        const principal = { id: options.principal, tenant, roles, ...(purposes ? { purposes } : {}) };
        const minted = await mintToken(signingKey, principal, ttl, config.tokens);
        const json = (program.opts() as { json?: boolean }).json;
        const claims = decodeJwt(minted);
        const expiresAt = new Date(Number(claims.exp) * 1000).toISOString();
        process.stdout.write(
          json
            ? `${JSON.stringify({ token: minted, tenant, principal: principal.id, roles, ...(purposes ? { purposes } : {}), jti: claims.jti, expiresAt })}\n`
            : `${minted}\n`,
        );
      },
    );

  token
    .command('revoke')
    .description(
      'revoke a token by its jti (or the jti of --jwt), from now on, on every API process (within seconds) until it would have expired',
    )
    .option('--jti <id>', "the token's jti (`token mint --json` prints it)")
    .option('--jwt <token>', 'the token itself: its jti and expiry are read from it (its signature is not checked)')
    .action(async (options: { jti?: string; jwt?: string }) => {
      if (!options.jti === !options.jwt) throw new CliError('--jti or --jwt: give one', ExitCode.usage);
      const config = loadConfig();
      let jti = options.jti;
      let expiresAt = new Date(Date.now() + (config.tokens.maxTtlSeconds + REVOCATION_MARGIN_SECONDS) * 1000);
      if (options.jwt) {
        let claims;
        try {
          claims = decodeJwt(options.jwt);
        } catch {
          throw new CliError('--jwt: not a JWT', ExitCode.usage);
        }
        if (typeof claims.jti !== 'string') throw new CliError('--jwt: the token has no jti', ExitCode.usage);
        jti = claims.jti;
        if (typeof claims.exp === 'number') expiresAt = new Date((claims.exp + REVOCATION_MARGIN_SECONDS) * 1000);
      }
      if (!jti || jti.length > 128) throw new CliError('--jti: 1 to 128 characters', ExitCode.usage);
      // Loaded here: the other token commands need no database client.
      const [{ MongoClient }, { createMongoRevokedTokenStore }] = await Promise.all([
        import('mongodb'),
        import('../../../src/governance/auth/revoked-token-store.js'),
      ]);
      const client = new MongoClient(config.mongo.uri, { serverSelectionTimeoutMS: 5000 });
      try {
        const store = createMongoRevokedTokenStore(client.db(config.mongo.dbName));
        await store.ensureIndexes();
        await store.revoke(jti, expiresAt);
      } finally {
        await client.close();
      }
      const json = (program.opts() as { json?: boolean }).json;
      process.stdout.write(
        json
          ? `${JSON.stringify({ jti, revokedUntil: expiresAt.toISOString() })}\n`
          : `revoked ${jti} until ${expiresAt.toISOString()}\n`,
      );
    });

  token
    .command('jwk')
    .description("print the public JWK of an Ed25519 private key under a kid: the entry to add to the API's key set")
    .requiredOption('--key <pem>', 'Ed25519 private key file (PKCS#8 PEM)')
    .requiredOption('--kid <id>', 'the id the key will have')
    .action((options: { key: string; kid: string }) => {
      const { privateKey, kid } = loadTokenSigningKey(options.key, options.kid);
      process.stdout.write(`${JSON.stringify(publicJwkOf(privateKey, kid))}\n`);
    });
}
