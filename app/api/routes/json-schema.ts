import { z } from 'zod';

/** JSON Schema (draft 7) of a zod schema's input, for Fastify validation and the OpenAPI document. */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return json;
}
