/**
 * A verifier over an OpenAI-compatible chat-completions endpoint, for deployments that run a model. The
 * obligations and the evidence go in (passages in time order, unmarked, under short aliases); a structured verdict
 * per obligation comes out. Any answer that is not a complete, well-formed verdict is a failure, which the audit
 * turns into unresolved, as it does a timeout. Errors name statuses, never the text sent.
 */
import { z } from 'zod';
import type { Obligation } from './obligations.js';
import { trimEndOf } from './text-cues.js';
import type { DerivationVerifier, EvidencePassage, ObligationVerdict } from './verifier.port.js';

export const OPENAI_COMPATIBLE_VERIFIER_ID = 'openai-compatible';
/** Bumped when the prompt or the verdict format changes: a verdict records which one produced it. */
export const OPENAI_COMPATIBLE_PROMPT_VERSION = '1';

export interface OpenAiCompatibleOptions {
  /** Base URL of the API, e.g. `http://127.0.0.1:8000/v1`; `/chat/completions` is appended. */
  url: string;
  model: string;
  apiKey?: string;
}

const INSTRUCTIONS = [
  'You audit whether a memory written by an AI agent is supported by the interaction history before it.',
  'For each obligation, answer with one label: "supported" (some passages together entail it), "contradicted"',
  '(some passages entail its negation for the same subject, event and time frame; a later change of state is not',
  'a contradiction), "insufficient" (neither), or "ambiguous" (it has no definite truth conditions here).',
  'A relation needs evidence for the relation itself, not only for its two ends.',
  'Answer only with JSON: {"verdicts":[{"id":"<obligation id>","label":"<label>","evidence":["<passage id>"]}]}.',
].join(' ');

const AnswerSchema = z.object({
  verdicts: z.array(
    z.object({
      id: z.string(),
      label: z.enum(['supported', 'contradicted', 'insufficient', 'ambiguous']),
      evidence: z.array(z.string()).default([]),
    }),
  ),
});

const CompletionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
});

/** The obligation as the model reads it: claims by their words, qualifiers and relations by what they bind. */
function describe(o: Obligation, all: readonly Obligation[]): Record<string, unknown> {
  if (o.kind === 'claim') return { id: o.id, kind: 'claim', text: o.text };
  if (o.kind === 'relation') {
    const text = (id: string) => all.find((x) => x.id === id && x.kind === 'claim') as { text: string } | undefined;
    return {
      id: o.id,
      kind: 'relation',
      relation: o.relation,
      from: text(o.between[0])?.text,
      to: text(o.between[1])?.text,
    };
  }
  return {
    id: o.id,
    kind: o.kind,
    of: o.claim,
    ...(o.time ? { time: o.time.value } : {}),
    ...(o.quantity ? { quantity: `${o.quantity.value} ${o.quantity.unit}` } : {}),
    ...(o.modality ? { modality: o.modality } : {}),
  };
}

export function createOpenAiCompatibleVerifier(options: OpenAiCompatibleOptions): DerivationVerifier {
  const endpoint = `${trimEndOf(options.url, '/')}/chat/completions`;
  return {
    id: OPENAI_COMPATIBLE_VERIFIER_ID,
    version: `${OPENAI_COMPATIBLE_PROMPT_VERSION}/${options.model}`,
    async verify(content, obligations, evidence, signal): Promise<ObligationVerdict[]> {
      const alias = new Map(evidence.map((p, i) => [`p${i + 1}`, p.id]));
      const passages = evidence.map((p: EvidencePassage, i) => ({ id: `p${i + 1}`, text: p.text }));
      const response = await fetch(endpoint, {
        method: 'POST',
        signal,
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: options.model,
          temperature: 0,
          response_format: { type: 'json_object' },
          messages: [
            { role: 'system', content: INSTRUCTIONS },
            {
              role: 'user',
              content: JSON.stringify({
                memory: content,
                obligations: obligations.map((o) => describe(o, obligations)),
                passages,
              }),
            },
          ],
        }),
      });
      if (!response.ok) throw new Error(`verifier endpoint answered ${response.status}`);
      const completion = CompletionSchema.safeParse(await response.json());
      if (!completion.success) throw new Error('verifier endpoint: not a chat completion');
      let parsed: unknown;
      try {
        parsed = JSON.parse(completion.data.choices[0]!.message.content);
      } catch {
        throw new Error('verifier endpoint: the answer is not JSON');
      }
      const answer = AnswerSchema.safeParse(parsed);
      if (!answer.success) throw new Error('verifier endpoint: the answer is not a verdict');
      const byId = new Map(answer.data.verdicts.map((v) => [v.id, v]));
      return obligations.map((o) => {
        const v = byId.get(o.id);
        if (!v) throw new Error(`verifier endpoint: no verdict for obligation ${o.id}`);
        return {
          obligationId: o.id,
          label: v.label,
          evidenceIds: v.evidence.map((a) => alias.get(a)).filter((id): id is string => id !== undefined),
        };
      });
    },
  };
}
