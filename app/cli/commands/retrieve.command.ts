import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';

interface RetrieveAnswer {
  retrievalId: string;
  items: {
    id: string;
    version: number;
    status: string;
    content: string;
    confidence: number;
    validFrom: string;
    validTo: string | null;
    tokens: number;
    disputes?: { id: string; with: string[] }[];
  }[];
  counts: { candidates: number; admissible: number; refused: number; unresolved: number; leftOutForBudget: number };
  short: boolean;
  budget: { tokens: number; used: number };
}

const whole = (value: string, name: string, max: number): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new CliError(`${name}: a whole number from 1 to ${max}`, ExitCode.usage);
  return n;
};

export function registerRetrieveCommand(program: Command, context: () => CliContext): void {
  program
    .command('retrieve <query>')
    .description("admissible context for this principal's purpose and intent, packed within a token budget")
    .option('--k <n>', 'admissible records to gather', '10')
    .option('--budget <tokens>', 'context budget in tokens', '2000')
    .option('--intent <intent>', 'current | history | as-of', 'current')
    .option('--as-of <instant>', 'for --intent as-of: an ISO 8601 instant')
    .option('--purpose <purpose>', "what the context is for (read policy); the role's duty by default")
    .option('--expose <ids...>', 'report these returned ids as put into a prompt')
    .action(
      async (
        query: string,
        options: { k: string; budget: string; intent: string; asOf?: string; purpose?: string; expose?: string[] },
      ) => {
        const k = whole(options.k, '--k', 50);
        const budgetTokens = whole(options.budget, '--budget', 100_000);
        const ctx = context();
        const answer = await ctx.api.post<RetrieveAnswer>(`/v1/tenants/${ctx.tenant}/retrieve`, {
          query,
          k,
          budgetTokens,
          intent: options.intent,
          ...(options.asOf ? { asOf: options.asOf } : {}),
          ...(options.purpose ? { purpose: options.purpose } : {}),
        });
        if (options.expose) {
          await ctx.api.post(`/v1/tenants/${ctx.tenant}/retrievals/${answer.retrievalId}/exposures`, {
            memoryIds: options.expose,
          });
        }
        if (ctx.json) return ctx.print(answer);
        const c = answer.counts;
        ctx.print(
          `retrieval ${answer.retrievalId}: ${answer.items.length} items, ${answer.budget.used}/${answer.budget.tokens} tokens; ` +
            `${c.candidates} candidates, ${c.refused} refused, ${c.unresolved} unresolved${answer.short ? ' (fewer than k admissible)' : ''}`,
        );
        for (const item of answer.items) {
          const valid = `${item.validFrom.slice(0, 10)}…${item.validTo ? item.validTo.slice(0, 10) : ''}`;
          const disputed = item.disputes
            ? `  disputed with ${item.disputes.flatMap((d) => d.with).join(', ') || '(not shown)'}`
            : '';
          ctx.print(
            `${item.id} v${item.version}  [${item.status}, ${valid}, confidence ${item.confidence}]  ${item.content}${disputed}`,
          );
        }
      },
    );
}
