import fs from 'node:fs';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';

interface RectificationView {
  id: string;
  state: string;
  memoryId: string;
  /** Keyed under the tenant's key; absent on a request filed before keying. */
  contentHash?: string;
  eraseInaccurate: boolean;
  receivedAt: string;
  dueAt: string;
  decidedBy: string | null;
  correctedId: string | null;
  derived: { stale: string[]; erased: string[] };
  erasureRequestId: string | null;
}

function show(ctx: CliContext, v: RectificationView): void {
  if (ctx.json) return ctx.print(v);
  const decided = v.decidedBy ? `; decided by ${v.decidedBy}` : '';
  ctx.print(
    `${v.id}  ${v.state}  memory ${v.memoryId} (received ${v.receivedAt.slice(0, 10)}, due ${v.dueAt.slice(0, 10)}${decided})` +
      (v.correctedId ? `  corrected as ${v.correctedId}` : '') +
      (v.derived.stale.length > 0 ? `  ${v.derived.stale.length} derived flagged stale` : '') +
      (v.erasureRequestId ? `  erasure ${v.erasureRequestId}` : ''),
  );
}

/** The corrected content, from `--content` or from a file (`-` for stdin), which keeps it out of shell history. */
function contentOf(o: { content?: string; contentFile?: string }): string {
  if ((o.content === undefined) === (o.contentFile === undefined))
    throw new CliError('--content or --content-file: give exactly one', ExitCode.usage);
  if (o.content !== undefined) return o.content;
  try {
    return fs.readFileSync(o.contentFile === '-' ? 0 : o.contentFile!, 'utf8').replace(/\n$/, '');
  } catch {
    throw new CliError(`--content-file: cannot read ${o.contentFile}`, ExitCode.usage);
  }
}

/** Rectification requests (Art. 16): the DPO files a correction, a reviewer decides, anyone on duty reads the state. */
export function registerRectifyCommands(program: Command, context: () => CliContext): void {
  const rectify = program
    .command('rectify')
    .description('rectification requests (GDPR Art. 16): correct one memory, with a reviewer signing it off');
  const base = (ctx: CliContext) => `/v1/tenants/${ctx.tenant}/subject-rights/rectification`;
  rectify
    .command('file')
    .description('file a correction of one memory (as the DPO); from now on it is not served as current')
    .option('--memory <id>', 'the memory whose content is inaccurate')
    .option('--subject <id>', 'or: the data subject whose current value of --attribute is inaccurate')
    .option('--attribute <name>', 'with --subject: the attribute (e.g. contact-channel)')
    .option('--content <text>', 'the corrected content')
    .option('--content-file <file>', 'read the corrected content from a file (- for stdin)')
    .option('--erase-inaccurate', 'erase the inaccurate value (with a certificate) instead of keeping it in history')
    .requiredOption('--key <key>', 'an idempotency key of your own: filing again with it returns the same request')
    .action(
      async (o: {
        memory?: string;
        subject?: string;
        attribute?: string;
        content?: string;
        contentFile?: string;
        eraseInaccurate?: boolean;
        key: string;
      }) => {
        const content = contentOf(o);
        const ctx = context();
        show(
          ctx,
          await ctx.api.post<RectificationView>(base(ctx), {
            requestKey: o.key,
            ...(o.memory !== undefined ? { memoryId: o.memory } : {}),
            ...(o.subject !== undefined ? { subjectId: o.subject } : {}),
            ...(o.attribute !== undefined ? { attribute: o.attribute } : {}),
            content,
            eraseInaccurate: o.eraseInaccurate === true,
          }),
        );
      },
    );
  rectify
    .command('list')
    .description("the tenant's rectification requests, newest first")
    .action(async () => {
      const ctx = context();
      const { items } = await ctx.api.get<{ items: RectificationView[] }>(base(ctx));
      if (ctx.json) return ctx.print(items);
      for (const item of items) show(ctx, item);
    });
  rectify
    .command('show <id>')
    .description("a rectification request's state: what was corrected, by whom, and what became of derived records")
    .action(async (id: string) => {
      const ctx = context();
      show(ctx, await ctx.api.get<RectificationView>(`${base(ctx)}/${encodeURIComponent(id)}`));
    });
  rectify
    .command('decide <id>')
    .description('approve or reject a correction (as a reviewer who neither wrote the record nor filed it)')
    .option('--approve', 'the corrected value becomes current')
    .option('--reject', 'the record stays as it was')
    .requiredOption('--reason <text>', 'why (kept as a keyed hash only)')
    .action(async (id: string, o: { approve?: boolean; reject?: boolean; reason: string }) => {
      if (o.approve === o.reject) throw new CliError('--approve or --reject: give exactly one', ExitCode.usage);
      const ctx = context();
      show(
        ctx,
        await ctx.api.post<RectificationView>(`${base(ctx)}/${encodeURIComponent(id)}/decision`, {
          decision: o.approve ? 'approve' : 'reject',
          reason: o.reason,
        }),
      );
    });
}
