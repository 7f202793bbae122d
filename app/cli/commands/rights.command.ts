import fs from 'node:fs';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';

interface RestrictionView {
  id: string;
  kind: string;
  subjectHash: string;
  purposes: string[] | null;
  legalGround: string;
  active: boolean;
  filedBy: string;
  filedAt: string;
  liftedBy: string | null;
  liftedAt: string | null;
}

function line(r: RestrictionView): string {
  const what = r.purposes ? `objection to ${r.purposes.join(', ')}` : 'restriction of all processing';
  const state = r.active ? 'active' : `lifted by ${r.liftedBy ?? '?'} ${r.liftedAt ?? ''}`.trim();
  return `${r.id}  ${what}  (ground ${r.legalGround}, filed ${r.filedAt.slice(0, 10)} by ${r.filedBy})  ${state}`;
}

function show(ctx: CliContext, r: RestrictionView): void {
  if (ctx.json) return ctx.print(r);
  ctx.print(line(r));
}

const PAGE_LIMIT_MAX = 500;

/**
 * A data subject's rights other than erasure: restriction of processing (Art. 18) and objection to purposes
 * (Art. 21), filed and lifted by the DPO.
 */
export function registerRightsCommands(program: Command, context: () => CliContext): void {
  const rights = program
    .command('rights')
    .description(
      "restriction of processing (Art. 18) and objection to purposes (Art. 21): agents stop reading a subject's records",
    );
  const file = async (
    o: { subject: string; ground: string; reason: string; key: string },
    purposes?: string[],
  ): Promise<void> => {
    const ctx = context();
    const view = await ctx.api.post<RestrictionView>(`/v1/tenants/${ctx.tenant}/subject-rights/restrictions`, {
      selector: { subjectId: o.subject },
      legalGround: o.ground,
      reason: o.reason,
      ...(purposes ? { purposes } : {}),
      requestKey: o.key,
    });
    show(ctx, view);
  };
  rights
    .command('restrict')
    .description("file a restriction: no agent reads the subject's records for any purpose until it is lifted")
    .requiredOption('--subject <id>', 'the data subject id')
    .requiredOption('--ground <ground>', 'art18-1a … art18-1d (GDPR Art. 18(1)(a)–(d))')
    .requiredOption('--reason <text>', 'why (kept as a keyed hash only)')
    .requiredOption('--key <key>', 'an idempotency key of your own: filing again with it returns the same request')
    .action((o: { subject: string; ground: string; reason: string; key: string }) => file(o));
  rights
    .command('object')
    .description("file an objection: no agent reads the subject's records for these purposes until it is lifted")
    .requiredOption('--subject <id>', 'the data subject id')
    .requiredOption('--purposes <purposes...>', 'the read purposes objected to (e.g. personalisation)')
    .requiredOption('--ground <ground>', 'art21-1, art21-2 (direct marketing) or art21-6 (research)')
    .requiredOption('--reason <text>', 'why (kept as a keyed hash only)')
    .requiredOption('--key <key>', 'an idempotency key of your own: filing again with it returns the same request')
    .action((o: { subject: string; purposes: string[]; ground: string; reason: string; key: string }) =>
      file(o, o.purposes),
    );
  rights
    .command('lift <id>')
    .description("lift a restriction or objection: agents read the subject's records again")
    .requiredOption('--reason <text>', 'why (kept as a keyed hash only)')
    .action(async (id: string, o: { reason: string }) => {
      const ctx = context();
      show(
        ctx,
        await ctx.api.post<RestrictionView>(
          `/v1/tenants/${ctx.tenant}/subject-rights/restrictions/${encodeURIComponent(id)}/lift`,
          { reason: o.reason },
        ),
      );
    });
  rights
    .command('list')
    .description("the tenant's restrictions and objections, most recent first")
    .option('--limit <n>', `at most this many (1–${PAGE_LIMIT_MAX})`, '100')
    .option('--cursor <cursor>', "the previous page's nextCursor")
    .action(async (o: { limit: string; cursor?: string }) => {
      const limit = Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT_MAX)
        throw new CliError(`--limit: a whole number from 1 to ${PAGE_LIMIT_MAX}`, ExitCode.usage);
      const ctx = context();
      const query = new URLSearchParams({ limit: String(limit), ...(o.cursor ? { cursor: o.cursor } : {}) });
      const page = await ctx.api.get<{ items: RestrictionView[]; nextCursor: string | null }>(
        `/v1/tenants/${ctx.tenant}/subject-rights/restrictions?${query}`,
      );
      if (ctx.json) return ctx.print(page);
      if (page.items.length === 0) return ctx.print('no restrictions or objections');
      for (const r of page.items) ctx.print(line(r));
      if (page.nextCursor) ctx.print(`more: --cursor ${page.nextCursor}`);
    });
  rights
    .command('show <id>')
    .description('one restriction or objection')
    .action(async (id: string) => {
      const ctx = context();
      show(
        ctx,
        await ctx.api.get<RestrictionView>(
          `/v1/tenants/${ctx.tenant}/subject-rights/restrictions/${encodeURIComponent(id)}`,
        ),
      );
    });
  rights
    .command('receipt <request-id>')
    .description("a closed request's signed receipt (access, rectification) into a file; check it with lethe verify")
    .requiredOption('--out <file>', 'where to write it (not overwritten if it exists)')
    .option(
      '--anchored',
      'with its place in the audit log (entry, signed checkpoint, inclusion proof): lethe verify --log-key checks it alone',
    )
    .action(async (id: string, o: { out: string; anchored?: boolean }) => {
      if (fs.existsSync(o.out)) throw new CliError(`--out: ${o.out} exists (nothing was written)`, ExitCode.usage);
      const ctx = context();
      type ReceiptView = { right: string; state: string; anchor: { auditSeq: number } };
      const url = `/v1/tenants/${ctx.tenant}/subject-rights/receipts/${encodeURIComponent(id)}`;
      const written = o.anchored
        ? await ctx.api.get<{ receipt: ReceiptView }>(`${url}/anchored`)
        : await ctx.api.get<ReceiptView>(url);
      const receipt = 'receipt' in written ? written.receipt : written;
      fs.writeFileSync(o.out, `${JSON.stringify(written, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
      if (ctx.json) return ctx.print({ file: o.out, ...receipt });
      ctx.print(
        `${receipt.right} receipt (${receipt.state}, audit seq ${receipt.anchor.auditSeq}) written to ${o.out}`,
      );
    });
}
