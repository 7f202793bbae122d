/** What the abuse bench tells its hostile clients' process (as JSON in `PLAN_ENV`): where, until when, as whom. */
export interface HostilePlan {
  baseUrl: string;
  /** Epoch ms: no request starts after it. */
  until: number;
  flood: { tenant: string; token: string };
  worstCase: { tenant: string; token: string; subject: string; evidenceIds: string[] };
  /** `events` of the largest size per batch (made in the clients' process: the environment holds no megabyte). */
  oversize: { tenant: string; token: string; subject: string; events: number };
  /** Tenants the unauthenticated floods name (the honest client's among them), and a token signed with another secret. */
  unauthenticated: { tenants: string[]; badToken: string };
}

export const PLAN_ENV = 'LETHE_ABUSE_PLAN';
