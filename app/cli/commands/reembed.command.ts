import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';
import type { ReembedStatus } from '../../../src/temporal/reembed-gateway.js';

/** What `/reembed` answers: the gateway's status, and on a start whether this call started it. */
type ReembedView = ReembedStatus & { started?: boolean };

const POLL_MS = 1000;

function print(ctx: CliContext, view: ReembedView): void {
  if (ctx.json) return ctx.print(view);
  const p = view.progress;
  ctx.print(
    `${view.workflowId}  ${view.state}` +
      (p
        ? `  phase ${p.phase}, model ${p.model ?? '?'}: ${p.copied} copied, ${p.caughtUp} caught up, ` +
          `${p.reconciled} checked, ${p.withdrawn + p.removed} withdrawn as erased` +
          (p.oldIndexLeft ? '; the replaced index could not be deleted: run `lethe index reconcile`' : '')
        : ''),
  );
}

export function registerReembedCommand(program: Command, context: () => CliContext): void {
  program
    .command('reembed')
    .description("re-embed the tenant's index with the configured embedder (admin): new index, atomic swap")
    .option('--status', 'only show the last re-embedding')
    .option('--wait [seconds]', 'poll until it has finished (at most 600 s, or as given)')
    .action(async (options: { status?: boolean; wait?: string | true }) => {
      const limit = options.wait === undefined ? 0 : options.wait === true ? 600 : Number(options.wait);
      if (!Number.isInteger(limit) || limit < 0)
        throw new CliError('--wait: a whole number of seconds ≥ 1', ExitCode.usage);
      const ctx = context();
      const path = `/v1/tenants/${ctx.tenant}/reembed`;
      let view = options.status ? await ctx.api.get<ReembedView>(path) : await ctx.api.post<ReembedView>(path, {});
      for (const until = Date.now() + limit * 1000; view.state === 'running' && Date.now() < until;) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        view = await ctx.api.get<ReembedView>(path);
      }
      print(ctx, view);
      if (view.state === 'failed') process.exitCode = ExitCode.failure;
    });
}

/** `lethe index reconcile`: deletes the tenant's orphaned indices (behind neither alias), naming each. */
export function registerIndexCommands(program: Command, context: () => CliContext): void {
  program
    .command('index')
    .description("operations on the tenant's search indices (admin)")
    .command('reconcile')
    .description(
      'delete indices of the tenant behind neither alias (left by a re-embedding whose old-index delete failed)',
    )
    .action(async () => {
      const ctx = context();
      const result = await ctx.api.post<{ dropped: string[] }>(`/v1/tenants/${ctx.tenant}/index/reconcile`, {});
      if (ctx.json) return ctx.print(result);
      ctx.print(
        result.dropped.length === 0
          ? 'no orphaned index'
          : result.dropped.map((index) => `deleted ${index}`).join('\n'),
      );
    });
}
