/**
 * `npm run demo`: Lethe end to end on the local stack — every dependency answering, a sample tenant
 * ingested through the workflow path, a governed hybrid search, a notification captured by the SMTP
 * server, and the tenant's audit chain exported and verified offline.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load-config.js';
import { createRuntime } from '../src/app/runtime.js';
import { createServices } from '../src/app/services.js';
import { buildApiServer } from '../src/api/server.js';
import { createLetheWorker } from '../src/temporal/worker.js';
import { mintToken } from '../src/governance/auth/tokens.js';
import { checkReadiness } from '../src/observability/readiness.js';
import { createApiClient } from '../src/cli/api-client.js';
import { verifyAuditJsonl } from '../src/governance/audit/audit-export.js';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadStackConfig } from '../stack/stack-config.js';
import { waitForMessage } from '../stack/smtp/mailbox.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const say = (line = '') => console.log(line);
const step = (title: string) => say(`\n── ${title}`);

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  const runtime = createRuntime(config, 'lethe-demo');
  const taskQueue = `demo-${process.pid}`;
  const services = createServices(runtime, { taskQueue });
  const tenant = `demo-${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;

  step('1. Every dependency answers');
  const readiness = await checkReadiness(runtime.probes);
  for (const [name, report] of Object.entries(readiness.dependencies)) {
    say(
      `   ${report.ok ? '✓' : '✗'} ${name.padEnd(14)} ${report.latencyMs} ms${report.error ? `  ${report.error}` : ''}`,
    );
  }
  if (!readiness.ready) throw new Error('the stack is not ready: run npm run stack:up');

  await services.ensureIndexes();
  const worker = await createLetheWorker(runtime, { taskQueue, services });
  const running = worker.run();
  const app = await buildApiServer({
    log: runtime.log,
    probes: runtime.probes,
    services,
    tokenSecret: config.secrets.tokenSecret,
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const agent = createApiClient(
      address,
      await mintToken(config.secrets.tokenSecret, { id: 'agent-7', tenant, roles: ['agent'] }),
    );
    const auditor = createApiClient(
      address,
      await mintToken(config.secrets.tokenSecret, { id: 'auditor-1', tenant, roles: ['auditor'] }),
    );

    step(`2. Ingest a sample tenant "${tenant}" through the ingestion workflow (events → memories → index)`);
    const sample = JSON.parse(fs.readFileSync(path.join(here, 'demo-data', 'sample-tenant.json'), 'utf8')) as object;
    const started = Date.now();
    const batch = await agent.post<{ events: unknown[]; memories: { id: string; status: string }[]; indexed: number }>(
      `/v1/tenants/${tenant}/batches`,
      sample,
    );
    say(
      `   ${batch.events.length} events and ${batch.memories.length} memories in ${Date.now() - started} ms; ${batch.indexed} indexed`,
    );
    for (const m of batch.memories)
      say(`   ${m.id}  ${m.status}${m.status === 'candidate' ? '  (high-impact: waits for a reviewer)' : ''}`);

    step('3. Governed hybrid search (BM25 + vectors, fused with RRF; scope and lifecycle pushed into the query)');
    for (const query of ['how does Ana want to be contacted?', 'invoices', 'contract renewal']) {
      const answer = await agent.post<{
        results: { score: number; memory: { id: string; content: string; status: string } }[];
      }>(`/v1/tenants/${tenant}/search`, { query, k: 3 });
      say(`   "${query}"`);
      if (answer.results.length === 0) say('      (nothing admissible)');
      for (const r of answer.results) say(`      ${r.score.toFixed(4)}  ${r.memory.content}`);
    }

    step('4. Re-delivery is idempotent; refusals name the field');
    const again = await agent.post<{ events: { outcome: string }[] }>(`/v1/tenants/${tenant}/batches`, {
      events: (sample as { events: unknown[] }).events.slice(0, 1),
    });
    say(`   same event again → ${again.events[0]?.outcome}`);
    await agent
      .post(`/v1/tenants/${tenant}/events`, {
        source: 'crm',
        externalId: 'x',
        namespace: 'support',
        subjects: ['s'],
        content: 'c',
        occurredAt: 'yesterday',
      })
      .catch((e: Error) => say(`   invalid date → refused: ${e.message}`));

    step('5. A notification through SMTP, read back from the capture server');
    const subject = `Lethe demo for ${tenant}`;
    await runtime.mail.sendMail({
      from: config.smtp.from,
      to: 'dpo@example.test',
      subject,
      text: `Tenant ${tenant} ingested ${batch.memories.length} memories.`,
    });
    const mail = await waitForMessage(loadStackConfig().smtp.captureDir, (m) => m.subject === subject);
    say(`   captured: "${mail.subject}" → ${mail.to.join(', ')}`);

    step('6. The audit chain, exported and verified offline');
    const jsonl = await auditor.getText(`/v1/tenants/${tenant}/audit`);
    const verdict = verifyAuditJsonl(jsonl);
    say(
      verdict.ok
        ? `   ✓ ${verdict.count} entries, chain intact, head ${verdict.headHash.slice(0, 16)}…`
        : `   ✗ ${JSON.stringify(verdict.firstBad)}`,
    );
    say('\nDone.');
  } finally {
    await app.close();
    worker.shutdown();
    await running;
    await runtime.close();
  }
}

main().catch((error: unknown) => {
  console.error(`demo failed: ${(error as Error).message}`);
  process.exit(1);
});
