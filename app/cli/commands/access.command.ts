import fs from 'node:fs';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';
import type { AccessRequestView } from '../../../src/shared/api-contract/access.js';

/** An access request as the API answers it. */
type AccessView = AccessRequestView;

const WAIT_SECONDS = 300;
const BUILDING = new Set(['received', 'building']);

function show(ctx: CliContext, v: AccessView): void {
  if (ctx.json) return ctx.print(v);
  const counts = Object.entries(v.counts)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  ctx.print(
    `${v.id}  ${v.state}  (${v.selectorKind}; received ${v.receivedAt.slice(0, 10)}, due ${v.dueAt.slice(0, 10)})` +
      (counts ? `  ${counts}` : '') +
      (v.expiresAt ? `  package until ${v.expiresAt}` : ''),
  );
}

/** Access and portability requests (Art. 15, 20): file one, watch it, download its signed package. */
export function registerAccessCommands(program: Command, context: () => CliContext): void {
  const access = program
    .command('access')
    .description(
      'access and portability requests (GDPR Art. 15, 20): a signed package of what Lethe holds about a subject',
    );
  access
    .command('file')
    .description('file an access request for a data subject; its package is built by a workflow')
    .requiredOption('--subject <id>', 'the data subject id')
    .requiredOption('--key <key>', 'an idempotency key of your own: filing again with it returns the same request')
    .action(async (o: { subject: string; key: string }) => {
      const ctx = context();
      show(
        ctx,
        await ctx.api.post<AccessView>(`/v1/tenants/${ctx.tenant}/subject-rights/access`, {
          selector: { subjectId: o.subject },
          requestKey: o.key,
        }),
      );
    });
  access
    .command('show <id>')
    .description("an access request's state: counts, dates and the package's digest")
    .option('--wait', `poll while the package is being built; exit 1 if it still is after ${WAIT_SECONDS} s`)
    .action(async (id: string, o: { wait?: boolean }) => {
      const ctx = context();
      const url = `/v1/tenants/${ctx.tenant}/subject-rights/access/${encodeURIComponent(id)}`;
      let view = await ctx.api.get<AccessView>(url);
      const deadline = Date.now() + WAIT_SECONDS * 1000;
      while (o.wait && BUILDING.has(view.state) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        view = await ctx.api.get<AccessView>(url);
      }
      show(ctx, view);
      if (o.wait && BUILDING.has(view.state))
        throw new CliError(`access ${id}: still ${view.state} after ${WAIT_SECONDS} s`, ExitCode.failure);
    });
  access
    .command('download <id>')
    .description('download the signed package (JSON) into a file; check it with lethe verify')
    .requiredOption('--out <file>', 'where to write it (not overwritten if it exists)')
    .action(async (id: string, o: { out: string }) => {
      if (fs.existsSync(o.out)) throw new CliError(`--out: ${o.out} exists (nothing was written)`, ExitCode.usage);
      const ctx = context();
      const pkg = await ctx.api.get<{ records: unknown[]; signature: { bodySha256: string } }>(
        `/v1/tenants/${ctx.tenant}/subject-rights/access/${encodeURIComponent(id)}/package`,
      );
      fs.writeFileSync(o.out, `${JSON.stringify(pkg, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
      const summary = { file: o.out, records: pkg.records.length, sha256: pkg.signature.bodySha256 };
      if (ctx.json) return ctx.print(summary);
      ctx.print(`${summary.records} records written to ${o.out} (package sha256 ${summary.sha256})`);
    });
}
