import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';

interface SearchAnswer {
  results: {
    score: number;
    memory: {
      id: string;
      status: string;
      kind: string;
      namespace: string;
      content: string;
      validFrom: string;
      validTo: string | null;
    };
  }[];
}

export function registerSearchCommand(program: Command, context: () => CliContext): void {
  program
    .command('search <query>')
    .description('hybrid (BM25 + vector) search of governed memories')
    .option('--k <n>', 'results to return', '10')
    .option('--intent <intent>', 'current | history | as-of', 'current')
    .option('--as-of <instant>', 'for --intent as-of: an ISO 8601 instant')
    .option('--namespace <ns...>', 'restrict to these namespaces')
    .option('--purpose <purpose>', "what the results are read for (read policy); the role's duty by default")
    .action(
      async (
        query: string,
        options: { k: string; intent: string; asOf?: string; namespace?: string[]; purpose?: string },
      ) => {
        const k = Number(options.k);
        if (!Number.isInteger(k) || k < 1 || k > 100)
          throw new CliError('--k: a whole number from 1 to 100', ExitCode.usage);
        const ctx = context();
        const answer = await ctx.api.post<SearchAnswer>(`/v1/tenants/${ctx.tenant}/search`, {
          query,
          k,
          intent: options.intent,
          ...(options.asOf ? { asOf: options.asOf } : {}),
          ...(options.namespace ? { namespaces: options.namespace } : {}),
          ...(options.purpose ? { purpose: options.purpose } : {}),
        });
        if (ctx.json) return ctx.print(answer);
        if (answer.results.length === 0) return ctx.print('no results');
        for (const { score, memory } of answer.results) {
          const valid = `${memory.validFrom.slice(0, 10)}…${memory.validTo ? memory.validTo.slice(0, 10) : ''}`;
          ctx.print(
            `${score.toFixed(4)}  ${memory.id}  [${memory.status}, ${memory.kind}, ${memory.namespace}, ${valid}]  ${memory.content}`,
          );
        }
      },
    );
}
