import { z } from 'zod';

/** JSON Schema (draft 7) of a zod schema's input, for Fastify validation and the OpenAPI document. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, {
    target: 'draft-7',
    io,
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return json;
}

/**
 * JSON Schema of a response contract (its output side), for the route's `response` and the OpenAPI document. Fastify
 * serializes the answer by it, so a field the contract does not name is never sent.
 */
export function responseSchemaOf(schema: z.ZodType): Record<string, unknown> {
  return jsonSchemaOf(schema, 'output');
}
