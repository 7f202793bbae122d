export const ROLES = ['agent', 'dpo', 'legal', 'reviewer', 'auditor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Who is asking: a principal of exactly one tenant, with roles. */
export interface Principal {
  id: string;
  tenant: string;
  roles: Role[];
}

export const TENANT_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;
