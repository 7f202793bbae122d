import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Whether a scrape may read the metrics: always when no token is configured (the port is then the operator's to
 * firewall), otherwise only with `Authorization: Bearer <token>`, compared in constant time.
 */
export function metricsAccessAllowed(token: string | undefined, authorization: string | undefined): boolean {
  if (token === undefined) return true;
  const presented = /^bearer (.+)$/i.exec(authorization ?? '')?.[1];
  if (presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(token));
}
