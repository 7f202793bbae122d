import fs from 'node:fs';
import readline from 'node:readline';
import type { Command } from 'commander';
import { verifyAuditJsonlStream } from '../../../src/governance/audit/audit-export.js';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';
import { checkConsistency } from '../../../src/governance/audit/log-tree/consistency-check.js';
import { witnessPolicy, withWitnessOptions, type WitnessOptions } from '../witness-options.js';
import { noteVerifier } from '../../../src/governance/audit/log-tree/signed-note.js';
import type { CheckpointView, ConsistencyProofView } from '../../../src/shared/api-contract/audit.js';

function seqOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${name}: a sequence number ≥ 1`, ExitCode.usage);
  return n;
}

interface ConsistencyOptions extends WitnessOptions {
  key: string;
}

export function registerAuditCommands(program: Command, context: () => CliContext): void {
  const audit = program.command('audit').description("the tenant's hash-chained audit log");

  audit
    .command('export')
    .description('write the audit chain as JSONL (one canonical entry per line) to stdout')
    .option('--from <seq>', 'first sequence number')
    .option('--to <seq>', 'last sequence number')
    .action(async (options: { from?: string; to?: string }) => {
      const ctx = context();
      const from = seqOption(options.from, '--from');
      const to = seqOption(options.to, '--to');
      const query = new URLSearchParams({
        ...(from ? { fromSeq: String(from) } : {}),
        ...(to ? { toSeq: String(to) } : {}),
      });
      process.stdout.write(await ctx.api.getText(`/v1/tenants/${ctx.tenant}/audit?${query.toString()}`));
    });

  audit
    .command('verify <file>')
    .description('verify an exported chain offline: hashes, links, order, no gaps (exit 7 on the first bad entry)')
    .option('--from <seq>', 'the sequence number the export starts at', '1')
    .option('--prev <hash>', 'the hash of the entry before the export (for a range that does not start at 1)')
    .option('--head <hash>', 'the hash the last entry must have (known from elsewhere: a truncated export fails)')
    .action(async (file: string, options: { from: string; prev?: string; head?: string }) => {
      const expectFromSeq = seqOption(options.from, '--from');
      for (const [flag, value] of [
        ['--prev', options.prev],
        ['--head', options.head],
      ] as const) {
        if (value !== undefined && !/^[0-9a-f]{64}$/.test(value))
          throw new CliError(`${flag}: a SHA-256 hash, 64 lower-case hex digits`, ExitCode.usage);
      }
      if (file !== '-' && !fs.existsSync(file)) throw new CliError(`file: no such file ${file}`, ExitCode.usage);
      const input = file === '-' ? process.stdin : fs.createReadStream(file, 'utf8');
      const lines = readline.createInterface({ input, crlfDelay: Infinity });
      const result = await verifyAuditJsonlStream(lines, {
        ...(expectFromSeq ? { expectFromSeq } : {}),
        ...(options.prev ? { expectPrevHash: options.prev } : {}),
        ...(options.head ? { expectHeadHash: options.head } : {}),
      });
      const json = (program.opts() as { json?: boolean }).json;
      if (result.ok) {
        process.stdout.write(
          json ? `${JSON.stringify(result)}\n` : `ok: ${result.count} entries, chain intact, head ${result.headHash}\n`,
        );
        return;
      }
      const bad = result.firstBad;
      process.stdout.write(
        json ? `${JSON.stringify(result)}\n` : `FAILED at line ${bad.index + 1} (seq ${bad.seq}): ${bad.reason}\n`,
      );
      process.exitCode = ExitCode.verificationFailed;
    });

  audit
    .command('checkpoint')
    .description(
      "print the log's latest signed checkpoint (a C2SP signed note, with the witnesses' cosignatures): keep it, to " +
        'check the next one against',
    )
    .action(async () => {
      const ctx = context();
      const view = await ctx.api.get<CheckpointView>(`/v1/tenants/${ctx.tenant}/audit/checkpoint`);
      const json = (program.opts() as { json?: boolean }).json;
      process.stdout.write(json ? `${JSON.stringify(view)}\n` : view.note);
    });

  withWitnessOptions(
    audit
      .command('check-consistency <earlier> <later>')
      .description(
        'prove that the log only grew between two checkpoints kept from earlier visits, and, with --witness-key, that ' +
          'witnesses you trust cosigned the later one (exit 7 when either fails)',
      )
      .requiredOption(
        '--key <verifier-key>',
        "the log's verifier key, <name>+<key id>+<key>, from a channel you trust",
      ),
    'the later checkpoint',
  ).action(async (earlierFile: string, laterFile: string, options: ConsistencyOptions) => {
    const ctx = context();
    const read = (file: string, name: string) => {
      if (!fs.existsSync(file)) throw new CliError(`${name}: no such file ${file}`, ExitCode.usage);
      return fs.readFileSync(file, 'utf8');
    };
    const [earlier, later] = [read(earlierFile, 'earlier'), read(laterFile, 'later')];
    try {
      noteVerifier(options.key);
    } catch (error) {
      throw new CliError(`--key: ${(error as Error).message}`, ExitCode.usage);
    }
    const witnesses = witnessPolicy(options);
    const verdict = await checkConsistency(
      earlier,
      later,
      options.key,
      async (from, to) => {
        const proof = await ctx.api.get<ConsistencyProofView>(
          `/v1/tenants/${ctx.tenant}/audit/proofs/consistency?from=${from}&to=${to}`,
        );
        return proof.proof.map((h) => new Uint8Array(Buffer.from(h, 'base64')));
      },
      witnesses,
    );
    const json = (program.opts() as { json?: boolean }).json;
    if (verdict.ok) {
      process.stdout.write(
        json ? `${JSON.stringify(verdict)}\n` : `ok: ${verdict.origin} grew from ${verdict.from} to ${verdict.to}\n`,
      );
      return;
    }
    process.stdout.write(json ? `${JSON.stringify(verdict)}\n` : `FAILED: ${verdict.reason}\n`);
    process.exitCode = ExitCode.verificationFailed;
  });
}
