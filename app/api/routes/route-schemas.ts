/** Schemas shared by routes (they also feed the generated OpenAPI document). */
export const tenantParams = {
  type: 'object',
  required: ['tenant'],
  properties: { tenant: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{1,62}$' } },
} as const;

export const tenantIdParams = {
  type: 'object',
  required: ['tenant', 'id'],
  properties: { tenant: tenantParams.properties.tenant, id: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

const errorBody = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' }, field: { type: 'string' } },
    },
  },
} as const;

export const errorResponses: Record<string, unknown> = {
  400: errorBody,
  401: errorBody,
  403: errorBody,
  404: errorBody,
  409: errorBody,
  410: errorBody,
  413: errorBody,
  422: errorBody,
  429: errorBody,
};
