import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { Command } from 'commander';
import { CliError, ExitCode } from '../exit-codes.js';
import type { CliContext } from '../context.js';

interface BatchAnswer {
  events: { id: string; outcome: string }[];
  memories: { id: string; status: string; outcome: string }[];
  indexed: number;
}

const CHUNK = 500;

/** Reads a JSON batch (`{events, memories}`) or JSONL lines of `{"event": …}` / `{"memory": …}`. */
function readBatches(file: string): { events: unknown[]; memories: unknown[] }[] {
  let text: string;
  try {
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch {
    throw new CliError(`file: cannot read ${file}`, ExitCode.usage);
  }
  const trimmed = text.trim();
  if (trimmed.startsWith('{') && !trimmed.includes('\n{')) {
    try {
      const batch = JSON.parse(trimmed) as { events?: unknown[]; memories?: unknown[] };
      return [{ events: batch.events ?? [], memories: batch.memories ?? [] }];
    } catch {
      throw new CliError(`file: ${file} is not valid JSON`, ExitCode.usage);
    }
  }
  const lines = trimmed.split('\n').filter((l) => l.trim());
  const batches: { events: unknown[]; memories: unknown[] }[] = [];
  for (let i = 0; i < lines.length; i += CHUNK) {
    const batch = { events: [] as unknown[], memories: [] as unknown[] };
    lines.slice(i, i + CHUNK).forEach((line, j) => {
      let item: { event?: unknown; memory?: unknown };
      try {
        item = JSON.parse(line) as typeof item;
      } catch {
        throw new CliError(`line ${i + j + 1}: not valid JSON`, ExitCode.usage);
      }
      if (item.event) batch.events.push(item.event);
      else if (item.memory) batch.memories.push(item.memory);
      else throw new CliError(`line ${i + j + 1}: expected {"event": …} or {"memory": …}`, ExitCode.usage);
    });
    batches.push(batch);
  }
  return batches;
}

export function registerIngestCommand(program: Command, context: () => CliContext): void {
  program
    .command('ingest <file>')
    .description('ingest events and memories from a JSON batch or a JSONL file (- for stdin)')
    .action(async (file: string) => {
      const ctx = context();
      const totals = { events: 0, duplicates: 0, memories: 0, candidates: 0 };
      const answers: BatchAnswer[] = [];
      for (const batch of readBatches(file)) {
        // A key per batch: sent again after a closed connection, the batch is answered, not written twice.
        const answer = await ctx.api.post<BatchAnswer>(`/v1/tenants/${ctx.tenant}/batches`, batch, {
          idempotencyKey: randomUUID(),
        });
        answers.push(answer);
        totals.events += answer.events.filter((e) => e.outcome !== 'duplicate').length;
        totals.duplicates += answer.events.filter((e) => e.outcome === 'duplicate').length;
        totals.memories += answer.memories.length;
        totals.candidates += answer.memories.filter((m) => m.status === 'candidate').length;
      }
      if (ctx.json) ctx.print({ ...totals, batches: answers });
      else
        ctx.print(
          `ingested ${totals.events} event(s) (${totals.duplicates} already known) and ${totals.memories} memory record(s), ${totals.candidates} awaiting sign-off`,
        );
    });
}
