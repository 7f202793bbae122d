/** A dependency the service needs to do its work, checked by the readiness routes and the demo. */
export interface DependencyProbe {
  readonly name: string;
  /** The API serves without it (mail is sent by the worker): reported to operators, not to the balancer. */
  readonly servesWithout?: boolean;
  check(): Promise<void>;
}

export interface DependencyReport {
  ok: boolean;
  latencyMs: number;
  error?: string;
}

export interface ReadinessReport {
  ready: boolean;
  dependencies: Record<string, DependencyReport>;
}

export async function checkReadiness(probes: readonly DependencyProbe[], timeoutMs = 3000): Promise<ReadinessReport> {
  const entries = await Promise.all(
    probes.map(async (probe): Promise<[string, DependencyReport]> => {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          probe.check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return [probe.name, { ok: true, latencyMs: Math.round(performance.now() - started) }];
      } catch (error) {
        // Driver messages name hosts and ports, never data: safe to report.
        const message = (error as Error).message.split('\n')[0]?.slice(0, 200) ?? 'unknown error';
        return [probe.name, { ok: false, latencyMs: Math.round(performance.now() - started), error: message }];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: entries.every(([, r]) => r.ok), dependencies: Object.fromEntries(entries) };
}

/**
 * Whether the API can serve, for the load balancer's unauthenticated probe: the dependencies it serves with, checked
 * at most once per `ttlMs` whatever the number of callers (concurrent callers share the check in flight), so that a
 * flood of probes cannot become a flood on the dependencies.
 */
export function cachedReadiness(probes: readonly DependencyProbe[], ttlMs = 5000): () => Promise<boolean> {
  const needed = probes.filter((p) => !p.servesWithout);
  let last: { at: number; ready: Promise<boolean> } | undefined;
  return () => {
    const now = performance.now();
    if (!last || now - last.at >= ttlMs) {
      last = { at: now, ready: checkReadiness(needed).then((r) => r.ready) };
    }
    return last.ready;
  };
}
