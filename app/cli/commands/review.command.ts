import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';

interface QueueItem {
  type: 'sign-off' | 'dispute';
  id: string;
  namespace: string;
  kind?: string;
  memoryIds?: string[];
  recordedAt: string;
  reason?: string | null;
  writtenBy: string;
}

function requireReason(reason: string | undefined): string {
  if (!reason || reason.trim() === '')
    throw new CliError('--reason: required (every decision records why)', ExitCode.usage);
  return reason;
}

/** Reviewers' tooling: the queue of sign-offs and disputes, one item with its evidence, and decisions. */
export function registerReviewCommands(program: Command, context: () => CliContext): void {
  const review = program.command('review').description('sign-offs of high-impact writes, and disputes');
  review
    .command('queue')
    .description('pending sign-offs and open disputes, oldest first')
    .option('--type <type>', 'sign-off | dispute')
    .option('--namespace <ns>', 'only this namespace')
    .option('--kind <kind>', 'only memories of this kind (sign-offs)')
    .option('--older-than-hours <h>', 'only items waiting at least this long')
    .action(async (o: { type?: string; namespace?: string; kind?: string; olderThanHours?: string }) => {
      if (o.type !== undefined && o.type !== 'sign-off' && o.type !== 'dispute') {
        throw new CliError('--type: sign-off or dispute', ExitCode.usage);
      }
      const ctx = context();
      const query = new URLSearchParams(
        Object.entries({ type: o.type, namespace: o.namespace, kind: o.kind, olderThanHours: o.olderThanHours }).filter(
          (e): e is [string, string] => e[1] !== undefined,
        ),
      );
      const answer = await ctx.api.get<{ items: QueueItem[] }>(`/v1/tenants/${ctx.tenant}/review-queue?${query}`);
      if (ctx.json) return ctx.print(answer);
      if (answer.items.length === 0) return ctx.print('nothing waiting');
      for (const item of answer.items) {
        const what =
          item.type === 'dispute' ? `between ${item.memoryIds?.join(' and ')}` : `${item.kind} (${item.reason ?? ''})`;
        ctx.print(
          `${item.type.padEnd(8)}  ${item.id}  ${item.namespace}  since ${item.recordedAt}  ${what}  by ${item.writtenBy}`,
        );
      }
    });
  review
    .command('show <id>')
    .description('one pending sign-off (mem_…) or dispute (dsp_…) with its evidence; content only to a reviewer')
    .action(async (id: string) => {
      const ctx = context();
      const path = id.startsWith('dsp_') ? `disputes/${id}` : `review-queue/${id}`;
      ctx.print(await ctx.api.get<unknown>(`/v1/tenants/${ctx.tenant}/${path}`));
    });
  review
    .command('decide <memoryId>')
    .description('approve or reject a pending high-impact write')
    .option('--approve', 'make it active')
    .option('--reject', 'keep it as rejected, never served')
    .option('--reason <text>', 'why (kept with the decision)')
    .action(async (memoryId: string, o: { approve?: boolean; reject?: boolean; reason?: string }) => {
      if (Boolean(o.approve) === Boolean(o.reject))
        throw new CliError('decision: give exactly one of --approve, --reject', ExitCode.usage);
      const reason = requireReason(o.reason);
      const ctx = context();
      const answer = await ctx.api.post<{ id: string; status: string }>(
        `/v1/tenants/${ctx.tenant}/review-queue/${memoryId}/decision`,
        { decision: o.approve ? 'approve' : 'reject', reason },
      );
      ctx.print(ctx.json ? answer : `${answer.id}  ${answer.status}`);
    });
  review
    .command('resolve <disputeId>')
    .description('adjudicate a dispute: keep one (the other is superseded), keep both, or reject one')
    .option('--keep <memoryId>', 'keep this record; the other is superseded')
    .option('--keep-both', 'both records stand (e.g. different valid times)')
    .option('--reject <memoryId>', 'reject this record; the other stands')
    .option('--reason <text>', 'why (recorded as the resolution event)')
    .action(async (disputeId: string, o: { keep?: string; keepBoth?: boolean; reject?: string; reason?: string }) => {
      const chosen = [o.keep ? 'keep' : null, o.keepBoth ? 'keep-both' : null, o.reject ? 'reject' : null].filter(
        Boolean,
      );
      if (chosen.length !== 1)
        throw new CliError('outcome: give exactly one of --keep, --keep-both, --reject', ExitCode.usage);
      const reason = requireReason(o.reason);
      const body = o.keep
        ? { outcome: 'keep-one', memoryId: o.keep, reason }
        : o.reject
          ? { outcome: 'reject-one', memoryId: o.reject, reason }
          : { outcome: 'keep-both', reason };
      const ctx = context();
      const answer = await ctx.api.post<{ disputeId: string; statuses: Record<string, string> }>(
        `/v1/tenants/${ctx.tenant}/disputes/${disputeId}/resolution`,
        body,
      );
      if (ctx.json) return ctx.print(answer);
      for (const [id, status] of Object.entries(answer.statuses)) ctx.print(`${id}  ${status}`);
    });
}
