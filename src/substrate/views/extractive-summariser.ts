import type { Summariser, SummaryInput } from './summariser.port.js';

/** Sentences of one view at most: the latest distinct values. */
export const MAX_SUMMARY_SENTENCES = 8;

/** Two contents that differ only in case, spacing and a final full stop say the same thing. */
export function normalisedContent(content: string): string {
  return content
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/(?<!\.)\.+$/, '')
    .toLowerCase();
}

/**
 * The distinct contents of the inputs, oldest first (the latest value last), each once, joined as sentences:
 * every sentence of the summary is one input's own text, so nothing is said that no input said.
 */
export function extractiveSummary(inputs: readonly SummaryInput[]): string {
  const ordered = [...inputs].sort((a, b) => a.validFrom.getTime() - b.validFrom.getTime() || (a.id < b.id ? -1 : 1));
  const latest = new Map<string, string>();
  for (const input of ordered) {
    const key = normalisedContent(input.content);
    latest.delete(key);
    latest.set(key, input.content.trim().replace(/\s+/g, ' '));
  }
  const sentences = [...latest.values()].slice(-MAX_SUMMARY_SENTENCES);
  return sentences.map((s) => (/[.!?]$/.test(s) ? s : `${s}.`)).join(' ');
}

export function createExtractiveSummariser(): Summariser {
  return {
    modelVersion: 'extractive@1',
    promptVersion: null,
    summarise: async (inputs) => extractiveSummary(inputs),
  };
}
