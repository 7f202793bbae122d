/**
 * Who is reading, resolved once per call from the token, the request and the two read policies
 * (`policies/memory-read.json`: which sensitivities for which purpose; `policies/memory-scope.json`: whose
 * records). A reader holds one grant per purpose it reads for; its rights are the union of those grants, never
 * their cross-product: `agent+admin` reads confidential records in its own scope (support) and internal ones
 * tenant-wide (operations), not confidential ones tenant-wide. Pure code.
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

export interface Reader {
  principal: Principal;
  grants: readonly Grant[];
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
  /** The purpose the caller declares; absent: the duty of each of its roles. */
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
  const roles = [...principal.roles];
  const purposes =
    request.purpose !== undefined ? [request.purpose] : [...new Set(principal.roles.map((r) => DUTY_PURPOSE[r]))];
  const grants: Grant[] = [];
  for (const purpose of purposes) {
    const sensitivities = SENSITIVITIES.filter(
      (sensitivity) => evaluatePolicy(policies.read, { roles, purpose, sensitivity }).outcome === 'allow',
    );
    if (sensitivities.length > 0) {
      const scope = evaluatePolicy(policies.scope, { roles, purpose });
      const tenantWide = scope.outcome === 'tenant-wide';
      grants.push({
        purpose,
        view: 'content',
        sensitivities,
        scopes: tenantWide ? 'all' : [principalScope(principal.id), 'tenant'],
        duty: DUTY_PURPOSES.has(purpose),
        readsRestricted: purpose === 'legal-hold' && hasRole(roles, 'legal'),
        rule: scope.ruleId,
      });
    } else if (purpose === AUDIT_PURPOSE && hasRole(roles, 'auditor')) {
      grants.push(contentFree(purpose));
    }
  }
  if (request.contentFreeForGate && !grants.some((g) => g.view === 'content-free')) grants.push(contentFree('gate'));
  return {
    principal,
    grants,
    intent: request.intent ?? 'current',
    ...(request.asOf ? { asOf: request.asOf } : {}),
    now: request.now ?? new Date(),
    purpose: purposes.join(','),
    restrictions: request.restrictions ?? NO_RESTRICTIONS,
    policies: {
      read: { id: policies.read.id, version: policies.read.version },
      scope: { id: policies.scope.id, version: policies.scope.version },
    },
  };
}

/**
 * The reader an erasure's search probe runs as: one who could have seen every record of the tenant before the
 * erasure (every scope and sensitivity, every status short of erasure), asking a history question.
 */
export function probeReader(tenant: string, now: Date): Reader {
  return {
    principal: { id: 'lethe-erasure-probe', tenant, roles: [] },
    grants: [{ ...contentFree('erasure-probe'), view: 'content', rule: 'erasure-probe' }],
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
