import fs from 'node:fs';
import type { Command } from 'commander';
import { loadConfig } from '../../../src/config/load-config.js';
import { CliError, ExitCode } from '../exit-codes.js';

/** Between the two re-wrap passes: far longer than any single key write takes. */
const SETTLE_MS = 2000;

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('key-encryption keys (KEKs) that wrap every record’s data key');
  keys
    .command('init')
    .description(
      'make the first KEK epoch: a new local keyring file (--file; refuses one that exists), or, with LETHE_KMS=aws-kms, a first key in the KMS (refuses a KMS that holds epochs already)',
    )
    .option('--file <path>', 'the local keyring to write (then set LETHE_KEK_FILE to it)')
    .action(async (options: { file?: string }) => {
      if (options.file) {
        const { ensureLocalKekFile } = await import('../../../src/substrate/crypto/local-kek-file.js');
        if (fs.existsSync(options.file)) throw new CliError(`--file: ${options.file} exists already`, ExitCode.usage);
        ensureLocalKekFile(options.file);
        process.stdout.write(`${options.file}\n`);
        return;
      }
      const config = loadConfig();
      const kek = config.sealing.kek;
      if (kek.kind !== 'aws-kms')
        throw new CliError('--file: required unless LETHE_KMS is aws-kms (the local keyring to write)', ExitCode.usage);
      const { createAwsKmsKeks, ensureFirstKmsEpoch } = await import('../../../src/substrate/crypto/aws-kms-keks.js');
      const keks = createAwsKmsKeks(kek);
      try {
        if (!(await ensureFirstKmsEpoch(keks)))
          throw new CliError(`the KMS holds KEK epochs under ${kek.aliasPrefix} already`, ExitCode.refused);
        process.stdout.write(`${kek.aliasPrefix}/epoch-1\n`);
      } finally {
        keks.close();
      }
    });
  keys
    .command('rotate')
    .description(
      'begin a new KEK epoch, re-wrap every live data key under it, and destroy the older epochs: erased content in the database log and backups becomes unreadable',
    )
    .action(async () => {
      const config = loadConfig();
      const [{ createRuntime }, { rotateKeks }, { recordDestroyedEpochs }, { createMongoAuditLog }, requestStore] =
        await Promise.all([
          import('../../runtime.js'),
          import('../../../src/substrate/crypto/kek-rotation.js'),
          import('../../../src/governance/keys/epoch-destruction.js'),
          import('../../../src/governance/audit/mongo-audit-log.js'),
          import('../../../src/governance/erasure/erasure-request-store.js'),
        ]);
      const runtime = createRuntime(config, 'lethe-keys');
      const json = (program.opts() as { json?: boolean }).json;
      try {
        const vault = runtime.cipher.vault;
        await vault.ensureIndexes();
        const started = Date.now();
        const outcome = await rotateKeks(vault, vault.keks, {
          settleMs: SETTLE_MS,
          onProgress: (done) => process.stderr.write(`re-wrapped ${done}\r`),
        });
        // The same entries the scheduled rotation makes: each tenant whose erasures waited on an epoch is told.
        const recorded = await recordDestroyedEpochs(
          {
            requests: requestStore.createMongoErasureRequestStore(runtime.db),
            audit: createMongoAuditLog(runtime.db),
            keks: vault.keks,
          },
          outcome.destroyed,
          'lethe-keys-rotate',
        );
        const ms = Date.now() - started;
        process.stdout.write(
          json
            ? `${JSON.stringify({ ...outcome, recorded, ms })}\n`
            : `epoch ${outcome.epoch} current; ${outcome.rewrapped} data keys re-wrapped; destroyed epochs: ${outcome.destroyed.join(', ') || 'none'}; ${recorded} audit entries (${ms} ms)\n`,
        );
        if (outcome.kept.length > 0) {
          throw new CliError(
            `epochs ${outcome.kept.join(', ')} still wrap data keys and were kept; run the rotation again`,
            ExitCode.refused,
          );
        }
      } finally {
        await runtime.close();
      }
    });
  keys
    .command('rehash')
    .description(
      'key the content hashes of rows and index documents written before hashes were keyed (HMACs under each tenant’s fingerprint key, from the plain digest each stored; no sealed content is opened); idempotent; with --tenant, only that tenant’s',
    )
    .action(async () => {
      const config = loadConfig();
      // `--tenant` is the program's own option: only that tenant's rows and documents (absent: every tenant's).
      const { tenant } = program.opts() as { tenant?: string };
      const [{ createRuntime }, { rehashContentHashes }, { createTenantMacs }] = await Promise.all([
        import('../../runtime.js'),
        import('../../../src/substrate/content-hash-rehash.js'),
        import('../../../src/substrate/fingerprint.js'),
      ]);
      const runtime = createRuntime(config, 'lethe-keys');
      const json = (program.opts() as { json?: boolean }).json;
      try {
        const started = Date.now();
        const counts = await rehashContentHashes(
          {
            db: runtime.db,
            es: runtime.es,
            indexPrefix: config.elasticsearch.indexPrefix,
            macs: createTenantMacs(config.secrets.fingerprintKeys),
            ...(tenant !== undefined ? { tenant } : {}),
          },
          (store, done) => process.stderr.write(`${store}: ${done}\r`),
        );
        const ms = Date.now() - started;
        process.stdout.write(
          json
            ? `${JSON.stringify({ rehashed: counts, ms })}\n`
            : `${Object.entries(counts)
                .map(([store, n]) => `${store}: ${n} re-keyed`)
                .join('; ')} (${ms} ms)\n`,
        );
      } finally {
        await runtime.close();
      }
    });
  keys
    .command('epochs')
    .description('list the KEK epochs: when each began and when its key material was destroyed')
    .action(async () => {
      const config = loadConfig();
      const { createRuntime } = await import('../../runtime.js');
      const runtime = createRuntime(config, 'lethe-keys');
      try {
        const epochs = await runtime.cipher.vault.keks.epochs();
        const json = (program.opts() as { json?: boolean }).json;
        for (const e of epochs) {
          process.stdout.write(
            json
              ? `${JSON.stringify(e)}\n`
              : `${e.epoch}\t${e.createdAt.toISOString()}\t${e.destroyedAt ? `destroyed ${e.destroyedAt.toISOString()}` : 'live'}\n`,
          );
        }
      } finally {
        await runtime.close();
      }
    });
}
