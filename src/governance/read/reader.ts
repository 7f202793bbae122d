/**
 * Who is reading, resolved once per call from the token, the request and the two read policies
 * (`policies/memory-read.json`: which sensitivities for which purpose; `policies/memory-scope.json`: whose
 * records). A reader holds one grant per purpose it reads for; its rights are the union of those grants, never
 * their cross-product: `agent+admin` reads confidential records in its own scope (support) and internal ones
 * tenant-wide (operations), not confidential ones tenant-wide. The purposes it may read for are not its to choose:
 * its token grants them (`grantedPurposes`), and an objection to any of them binds every context read it makes.
 * Pure code.
 */
import type { Principal, Role } from '../auth/principal.js';
import { evaluatePolicy, type PolicyDocument } from '../policy/evaluate.js';
import { DUTY_PURPOSE } from '../policy/read-purpose.js';
import { principalScope, SENSITIVITIES, type Sensitivity } from '../../substrate/model/records.js';
import { validationError } from '../../shared/errors.js';
import type { Intent } from './admissibility.js';
import { NO_RESTRICTIONS, type RestrictionSnapshot } from '../rights/restriction.js';

/** Purposes that read the tenant's records for a duty rather than as context (every status short of erasure). */
export const DUTY_PURPOSES: ReadonlySet<string> = new Set(['review', 'erasure', 'access-request', 'legal-hold']);

/** The auditor's purpose: ids, hashes and counts of every record type, never content. */
export const AUDIT_PURPOSE = 'audit';

/** What one purpose lets the reader see. */
export interface Grant {
  purpose: string;
  /** `content`: the record as written; `content-free`: ids, hashes and counts only. */
  view: 'content' | 'content-free';
  sensitivities: readonly Sensitivity[];
  /** Owner scopes readable for this purpose; `all` for a tenant-wide duty. */
  scopes: readonly string[] | 'all';
  duty: boolean;
  readsRestricted: boolean;
  /** The scope-policy rule that set `scopes` (or `content-free` for the auditor's view). */
  rule: string;
}

/**
 * The context purposes a principal may read for, besides its roles' duties: a list, or `any` when the read policy
 * grants its roles a purpose the policy does not name (then every objection binds it).
 */
export type GrantedPurposes = readonly string[] | 'any';

export interface Reader {
  principal: Principal;
  grants: readonly Grant[];
  /**
   * The purposes its token grants: an objection to any of them bars its context reads of the subject, whatever
   * purpose this request declared (a context read is one processing, whichever of its purposes it names).
   */
  grantedPurposes: GrantedPurposes;
  /** The purposes asked for that the token does not grant, when that left nothing to read for: the call is refused. */
  ungranted?: readonly string[];
  intent: Intent;
  asOf?: Date;
  now: Date;
  /** The purposes read for, joined: what refusals and retrievals record. */
  purpose: string;
  /** The tenant's active restrictions and objections, loaded once for this request. */
  restrictions: RestrictionSnapshot;
  policies: { read: { id: string; version: number }; scope: { id: string; version: number } };
}

export interface ReadRequest {
  /**
   * The purpose the caller declares, one its token grants or a duty of its roles; absent: the duty of each of its
   * roles that its token grants.
   */
  purpose?: string;
  intent?: Intent;
  asOf?: Date;
  now?: Date;
  /**
   * The route's role gate already entitles every caller to ids and hashes of what it lists (the review queue to
   * an admin): such a caller gets the content-free view where no content grant admits the record.
   */
  contentFreeForGate?: boolean;
  /** The tenant's active restrictions and objections; absent: none (a caller that reads no tenant's records). */
  restrictions?: RestrictionSnapshot;
}

export function resolveReader(
  policies: { read: PolicyDocument; scope: PolicyDocument },
  principal: Principal,
  request: ReadRequest = {},
): Reader {
  const granted = principal.purposes ?? grantedPurposes(policies.read, principal.roles);
  const asked =
    request.purpose !== undefined ? [request.purpose] : [...new Set(principal.roles.map((r) => DUTY_PURPOSE[r]))];
  const allowed = asked.flatMap((purpose) => grantFor(policies, principal, purpose) ?? []);
  const grants = allowed.filter((g) => mayReadFor(granted, g.purpose));
  // Refused as not granted only where the read policy would have let these roles read: else the policy's refusal stands.
  const ungranted =
    grants.length === 0 && allowed.length > 0 ? asked.filter((p) => !mayReadFor(granted, p)) : undefined;
  // A purpose the token does not grant is refused outright, not read for content-free.
  if (request.contentFreeForGate && !ungranted && !grants.some((g) => g.view === 'content-free'))
    grants.push(contentFree('gate'));
  const readFor = asked.filter((p) => mayReadFor(granted, p));
  return {
    principal,
    grants,
    grantedPurposes: granted,
    ...(ungranted ? { ungranted } : {}),
    intent: request.intent ?? 'current',
    ...(request.asOf ? { asOf: request.asOf } : {}),
    now: request.now ?? new Date(),
    purpose: (ungranted ?? (readFor.length > 0 ? readFor : asked)).join(','),
    restrictions: request.restrictions ?? NO_RESTRICTIONS,
    policies: {
      read: { id: policies.read.id, version: policies.read.version },
      scope: { id: policies.scope.id, version: policies.scope.version },
    },
  };
}

/** What the read policies let these roles see for one purpose, or null when nothing. */
function grantFor(
  policies: { read: PolicyDocument; scope: PolicyDocument },
  principal: Principal,
  purpose: string,
): Grant | null {
  const roles = [...principal.roles];
  const sensitivities = SENSITIVITIES.filter(
    (sensitivity) => evaluatePolicy(policies.read, { roles, purpose, sensitivity }).outcome === 'allow',
  );
  if (sensitivities.length > 0) {
    const scope = evaluatePolicy(policies.scope, { roles, purpose });
    return {
      purpose,
      view: 'content',
      sensitivities,
      scopes: scope.outcome === 'tenant-wide' ? 'all' : [principalScope(principal.id), 'tenant'],
      duty: DUTY_PURPOSES.has(purpose),
      readsRestricted: purpose === 'legal-hold' && hasRole(roles, 'legal'),
      rule: scope.ruleId,
    };
  }
  return purpose === AUDIT_PURPOSE && hasRole(roles, 'auditor') ? contentFree(purpose) : null;
}

/** A duty is its roles' to read for (the read policy decides by role); any other purpose must be granted. */
export function mayReadFor(granted: GrantedPurposes, purpose: string): boolean {
  return DUTY_PURPOSES.has(purpose) || purpose === AUDIT_PURPOSE || granted === 'any' || granted.includes(purpose);
}

/** A purpose no policy names: if the read policy allows it, it allows purposes it does not list. */
const UNNAMED_PURPOSE = '\u0000unnamed';

const defaultGrants = new WeakMap<PolicyDocument, Map<string, GrantedPurposes>>();

/**
 * What a token issued without a `purposes` claim grants: every purpose its roles could already read for, so that
 * such a token reads as it did while an objection to any purpose it could name binds it. That is each role's default
 * purpose and every purpose the read policy allows these roles any sensitivity for; `any` when the read policy
 * allows them a purpose it does not name. Narrower defaults (the roles' defaults only) would leave a token bound by
 * fewer objections than the purposes it could still be reissued for, and would break every client that names one.
 */
export function grantedPurposes(readPolicy: PolicyDocument, roles: readonly Role[]): GrantedPurposes {
  const key = [...new Set(roles)].sort().join(',');
  let byRoles = defaultGrants.get(readPolicy);
  const known = byRoles?.get(key);
  if (known) return known;
  const allows = (purpose: string) =>
    SENSITIVITIES.some(
      (sensitivity) => evaluatePolicy(readPolicy, { roles: [...roles], purpose, sensitivity }).outcome === 'allow',
    );
  const named = new Set([...roles.map((r) => DUTY_PURPOSE[r]), ...readPolicy.rules.flatMap((r) => literals(r.when))]);
  const granted: GrantedPurposes = allows(UNNAMED_PURPOSE)
    ? 'any'
    : [...named].filter((p) => roles.some((r) => DUTY_PURPOSE[r] === p) || allows(p)).sort();
  if (!byRoles) defaultGrants.set(readPolicy, (byRoles = new Map()));
  byRoles.set(key, granted);
  return granted;
}

/** Every string a json-logic condition holds: the purposes a policy names are among them. */
function literals(node: unknown): string[] {
  if (typeof node === 'string') return [node];
  if (Array.isArray(node)) return node.flatMap(literals);
  if (node && typeof node === 'object') return Object.values(node).flatMap(literals);
  return [];
}

/**
 * The reader an erasure's search probe runs as: one who could have seen every record of the tenant before the
 * erasure (every scope and sensitivity, every status short of erasure), asking a history question.
 */
export function probeReader(tenant: string, now: Date): Reader {
  return {
    principal: { id: 'lethe-erasure-probe', tenant, roles: [] },
    grants: [{ ...contentFree('erasure-probe'), view: 'content', rule: 'erasure-probe' }],
    grantedPurposes: [],
    intent: 'history',
    now,
    purpose: 'erasure-probe',
    // The probe must find every copy, restricted or not.
    restrictions: NO_RESTRICTIONS,
    policies: { read: { id: 'erasure-probe', version: 0 }, scope: { id: 'erasure-probe', version: 0 } },
  };
}

/** Ids, hashes and counts across the tenant: any sensitivity, every status short of erasure, no held record. */
function contentFree(purpose: string): Grant {
  return {
    purpose,
    view: 'content-free',
    sensitivities: SENSITIVITIES,
    scopes: 'all',
    duty: true,
    readsRestricted: false,
    rule: 'content-free',
  };
}

/**
 * The intent and instant a request asks about, checked: `as-of` needs `asOf`, and only `as-of` takes one. Throws a
 * validation error naming `asOf`.
 */
export function intentOf(request: { intent?: Intent; asOf?: string }): { intent: Intent; asOf?: Date } {
  const intent = request.intent ?? 'current';
  if (intent === 'as-of' && !request.asOf) throw validationError('asOf', 'required when intent is as-of');
  if (intent !== 'as-of' && request.asOf) throw validationError('asOf', 'only with intent as-of');
  return { intent, ...(request.asOf ? { asOf: new Date(request.asOf) } : {}) };
}

const hasRole = (roles: readonly Role[], role: Role) => roles.includes(role);

/** The grants that show content: what search and retrieval push into the index. */
export function contentGrants(reader: Reader): Grant[] {
  return reader.grants.filter((g) => g.view === 'content');
}
