import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditLog } from '../../src/governance/audit/audit-log.port.js';
import { roleAllows, type Action } from '../../src/governance/auth/permissions.js';
import type { Principal } from '../../src/governance/auth/principal.js';
import { TENANT_PATTERN } from '../../src/governance/auth/principal.js';
import {
  bearer,
  DEFAULT_TOKEN_LIMITS,
  verifyToken,
  type RevocationCheck,
  type TokenKeys,
  type TokenLimits,
} from '../../src/governance/auth/tokens.js';
import { DomainError, ErrorType } from '../../src/shared/errors.js';
import type { UnprovenCallBudget } from './rate-limits.js';
import type { Metrics } from '../../src/observability/metrics.port.js';

export type RouteReads = 'records' | 'ids' | 'none';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /** The action a tenant-scoped route performs; the role gate and the audit entry name it. */
    action?: Action;
    /**
     * What the route hands back of the tenant's records: `records` (content or the content-free view, only
     * through the presenters and the read judge), `ids` (ids, hashes, counts and states), or `none`.
     */
    reads?: RouteReads;
  }
}

/**
 * Every route under `/v1/tenants/:tenant` is authenticated (401), role-gated (403) and confined to the
 * principal's own tenant (403). Refusals are recorded where they prove something (see `recordRefusal`).
 */
export function registerAuthentication(
  app: FastifyInstance,
  deps: {
    tokenKeys: TokenKeys;
    tokenLimits?: TokenLimits;
    audit: AuditLog;
    revocations?: RevocationCheck;
    /** Spends the caller's address budget when its token is refused (429 once spent). */
    unproven?: UnprovenCallBudget;
    /** Counts refusals by reason for the operator. */
    metrics?: Pick<Metrics, 'refused'>;
  },
): void {
  app.addHook('onRequest', async (request, reply) => {
    const action = request.routeOptions.config.action;
    if (!action) return;
    const tenant = (request.params as { tenant?: string }).tenant ?? '';
    if (!TENANT_PATTERN.test(tenant)) {
      await deps.unproven?.(request, reply);
      throw new DomainError(ErrorType.Validation, 'tenant: invalid tenant id', 'tenant');
    }
    let principal: Principal | undefined;
    try {
      principal = await verifyToken(
        deps.tokenKeys,
        bearer(request.headers.authorization),
        deps.tokenLimits ?? DEFAULT_TOKEN_LIMITS,
        deps.revocations,
      );
      if (principal.tenant !== tenant) {
        throw new DomainError(ErrorType.Forbidden, 'tenant: the token is not valid for this tenant', 'tenant');
      }
      if (!roleAllows(principal.roles, action)) {
        throw new DomainError(
          ErrorType.Forbidden,
          `authorization: no role of this principal may ${action}`,
          'authorization',
        );
      }
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (!principal && deps.unproven) await deps.unproven(request, reply);
      await recordRefusal(deps.audit, request, tenant, action, principal, error, deps.metrics);
      throw error;
    }
    request.principal = principal;
  });
}

/** Refusals by kind since the process started: what an operator's metrics read (no tenant, no principal). */
export const refusalCounts = { unauthenticated: 0, foreignTenant: 0, role: 0 };

/**
 * Where a refusal is recorded. A caller without a valid token proves nothing about who it is: it is logged and
 * counted, never appended to the audit chain of the tenant it named (anyone could grow any tenant's chain). A
 * principal of another tenant is recorded in its own tenant's chain, which its auditors read, naming the tenant
 * it tried. A principal of this tenant refused by the role gate is recorded in this tenant's chain.
 */
async function recordRefusal(
  audit: AuditLog,
  request: FastifyRequest,
  tenant: string,
  action: Action,
  principal: Principal | undefined,
  error: DomainError,
  metrics?: Pick<Metrics, 'refused'>,
): Promise<void> {
  const route = request.routeOptions.url ?? 'unknown';
  if (!principal) {
    refusalCounts.unauthenticated++;
    metrics?.refused('unauthenticated');
    request.log.warn(
      { route, method: request.method, status: error.status, type: error.type },
      'unauthenticated call refused',
    );
    return;
  }
  const foreign = principal.tenant !== tenant;
  if (foreign) refusalCounts.foreignTenant++;
  else refusalCounts.role++;
  metrics?.refused(foreign ? 'foreign-tenant' : 'role');
  await audit.append({
    tenant: principal.tenant,
    actor: principal.id,
    action: 'access.refused',
    outcome: 'refused',
    details: {
      requested: action,
      route,
      method: request.method,
      status: error.status,
      type: error.type,
      ...(foreign ? { requestedTenant: tenant } : {}),
    },
  });
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new DomainError(ErrorType.Unauthenticated, 'authorization: bearer token required', 'authorization');
  return request.principal;
}
