export const ROLES = ['agent', 'dpo', 'legal', 'reviewer', 'auditor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Who is asking: a principal of exactly one tenant, with roles and the purposes its token grants. */
export interface Principal {
  id: string;
  tenant: string;
  roles: Role[];
  /**
   * The context purposes its token grants (the `purposes` claim set when the token is issued): it may declare no
   * other besides its roles' duties, and an objection to any of them binds all its context reads. Absent: a token
   * issued without the claim (`grantedPurposes` in `governance/read/reader.ts` says what such a token gets).
   */
  purposes?: readonly string[];
}

export const TENANT_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;

/** A purpose's name, as the read policy, a token's `purposes` claim and an objection spell it. */
export const PURPOSE_PATTERN = /^[a-z][a-z0-9-]{0,63}$/;

/** Most purposes one token may grant. */
export const MAX_GRANTED_PURPOSES = 32;

/** What is wrong with a `purposes` claim (a list of distinct purpose names), or null when nothing is. */
export function purposesProblem(purposes: unknown): string | null {
  if (!Array.isArray(purposes)) return 'must be a list of purposes';
  if (purposes.length > MAX_GRANTED_PURPOSES) return `at most ${MAX_GRANTED_PURPOSES} purposes`;
  for (const [i, p] of purposes.entries()) {
    if (typeof p !== 'string' || !PURPOSE_PATTERN.test(p))
      return `item ${i + 1} is not a purpose name (lower-case letters, digits and "-", at most 64)`;
    if (purposes.indexOf(p) !== i) return `"${p}" is named twice`;
  }
  return null;
}
