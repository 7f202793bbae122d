import { loadConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/config/config.js';
import { createRuntime } from '../runtime.js';
import { buildApiServer } from './server.js';
import { createServices } from '../services.js';
import { loadTokenKeys } from '../../src/governance/auth/token-keys.js';
import { exitGracefully } from '../graceful-exit.js';

async function main(): Promise<void> {
  const config = loadConfig();
  // Read before anything connects: a key set that cannot be read stops the API at boot, naming its variable.
  const tokenKeys = loadTokenKeys(config.tokens);
  const runtime = createRuntime(config, 'lethe-api');
  const services = createServices(runtime, {
    certificateKey: 'public',
    // The API serves the open erasure requests: every deployment runs it, and only it, so they are counted once.
    metrics: { erasureBacklog: true, processMetrics: true },
  });
  await services.ensureIndexes();
  const app = await buildApiServer({
    log: runtime.log,
    probes: runtime.probes,
    services,
    tokenKeys,
    tokenLimits: runtime.config.tokens,
    limits: runtime.config.limits,
    tracing: runtime.tracing,
    ...(runtime.config.metrics.token ? { metricsToken: runtime.config.metrics.token } : {}),
  });
  // Fastify's close stops accepting, answers 503 to new requests on open connections, closes idle ones, and
  // resolves once the requests in flight are answered.
  exitGracefully(
    async () => {
      await app.close();
      await runtime.close();
    },
    { log: runtime.log, deadlineMs: runtime.config.shutdown.graceMs },
  );
  await app.listen({ host: runtime.config.api.host, port: runtime.config.api.port });
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`configuration error: ${error.message}\n`);
  else process.stderr.write(`api failed: ${(error as Error).message}\n`);
  process.exit(1);
});
