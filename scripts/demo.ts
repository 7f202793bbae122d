/**
 * `npm run demo`: Lethe end to end on the local stack — every dependency answering, a sample tenant
 * ingested through the workflow path, a governed hybrid search, a reviewer's sign-off, a contradiction
 * disputed and adjudicated, a data subject erased with a signed certificate verified offline, a
 * notification captured by the SMTP server, and the tenant's audit chain exported and verified offline.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load-config.js';
import { createRuntime } from '../app/runtime.js';
import { createServices } from '../app/services.js';
import { buildApiServer } from '../app/api/server.js';
import { createLetheWorker } from '../app/worker/worker.js';
import { mintToken } from '../src/governance/auth/tokens.js';
import { checkReadiness } from '../src/observability/readiness.js';
import { createApiClient } from '../app/cli/api-client.js';
import { verifyAuditJsonl } from '../src/governance/audit/audit-export.js';
import { verifyCertificatesJsonl } from '../src/governance/certificates/certificate-verify.js';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadStackConfig } from '../stack/stack-config.js';
import { waitForMessage } from '../stack/smtp/mailbox.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const say = (line = '') => console.log(line);
const step = (title: string) => say(`\n── ${title}`);

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  // The demo runs on this machine's generated development secrets, unless told otherwise.
  const config = loadConfig({
    ...process.env,
    LETHE_ENV: process.env.LETHE_ENV ?? 'development',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  });
  const runtime = createRuntime(config, 'lethe-demo');
  const taskQueue = `demo-${process.pid}`;
  // The demo's indices sync soft-delete retention leases every second, so that its erasure expunges at once;
  // production keeps Elasticsearch's 30 s default (an erasure then waits up to that long, on a durable timer).
  const services = createServices(runtime, {
    taskQueue,
    indexSettings: { 'index.soft_deletes.retention_lease.sync_interval': '1s' },
  });
  const tenant = `demo-${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;
  say(`Lethe's demo on Node.js ${process.version} (${process.execPath})`);

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
    tokenKeys: { hs256Secret: config.tokens.hs256Secret! },
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    // Each token names the context purposes its bearer reads for; the duty principals read for their duties only.
    const agent = createApiClient(
      address,
      await mintToken(config.tokens.hs256Secret!, { id: 'agent-7', tenant, roles: ['agent'], purposes: ['support'] }),
    );
    const auditor = createApiClient(
      address,
      await mintToken(config.tokens.hs256Secret!, { id: 'auditor-1', tenant, roles: ['auditor'], purposes: [] }),
    );
    const reviewer = createApiClient(
      address,
      await mintToken(config.tokens.hs256Secret!, { id: 'rita', tenant, roles: ['reviewer'], purposes: [] }),
    );
    const dpo = createApiClient(
      address,
      await mintToken(config.tokens.hs256Secret!, { id: 'dpo-1', tenant, roles: ['dpo'], purposes: [] }),
    );
    const otherAgent = createApiClient(
      address,
      await mintToken(config.tokens.hs256Secret!, { id: 'agent-9', tenant, roles: ['agent'], purposes: ['support'] }),
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

    say('   Context for the agent itself (its own and the shared scope, judged per record, packed into 200 tokens):');
    const context = await agent.post<{
      items: { id: string; content: string; tokens: number }[];
      counts: { candidates: number; refused: number; unresolved: number };
      budget: { used: number; tokens: number };
    }>(`/v1/tenants/${tenant}/retrieve`, { query: 'how does Ana want to be contacted?', k: 5, budgetTokens: 200 });
    for (const item of context.items) say(`      ${item.id}  (${item.tokens} tokens)  ${item.content}`);
    say(
      `      ${context.budget.used}/${context.budget.tokens} tokens; ${context.counts.candidates} candidates, ` +
        `${context.counts.refused} refused, ${context.counts.unresolved} unresolved`,
    );

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

    step('5. A reviewer signs off the high-impact write (a Temporal Update answers with the new status)');
    for (const m of batch.memories.filter((x) => x.status === 'candidate')) {
      const decided = await reviewer.post<{ status: string }>(`/v1/tenants/${tenant}/review-queue/${m.id}/decision`, {
        decision: 'approve',
        reason: 'confirmed against the HR system',
      });
      say(`   ${m.id}  candidate → ${decided.status}`);
    }

    step('6. A contradiction is disputed, disclosed side by side, and adjudicated');
    const contradiction = await otherAgent.post<{ memories: { id: string; status: string }[] }>(
      `/v1/tenants/${tenant}/batches`,
      {
        events: [
          {
            source: 'field-visit',
            externalId: 'visit-31',
            namespace: 'support',
            subjects: ['customer-ana'],
            occurredAt: '2026-10-20T10:00:00Z',
            content: 'Visited Ana at her new place in Braga.',
          },
        ],
        memories: [
          {
            namespace: 'support',
            subjects: ['customer-ana'],
            kind: 'fact',
            attribute: 'city',
            content: 'Ana lives in Braga.',
            validFrom: '2026-10-20T00:00:00Z',
            purpose: 'customer-support',
            sensitivity: 'internal',
            jurisdiction: 'PT',
            trustTier: 1,
            confidence: 0.8,
            provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-address' },
          },
        ],
      },
    );
    const braga = contradiction.memories[0]!;
    say(`   "Ana lives in Braga." → ${braga.status}`);
    const sideBySide = await agent.post<{
      results: { memory: { id: string; content: string; status: string }; disputes?: { id: string }[] }[];
    }>(`/v1/tenants/${tenant}/search`, { query: 'where does Ana live', k: 3 });
    for (const r of sideBySide.results.filter((x) => x.disputes)) {
      say(`      ${r.memory.status.padEnd(9)} ${r.memory.content}  (dispute ${r.disputes![0]!.id.slice(0, 16)}…)`);
    }
    const disputeId = sideBySide.results.find((r) => r.disputes)?.disputes?.[0]?.id;
    if (!disputeId) throw new Error('the contradiction did not open a dispute');
    const resolved = await reviewer.post<{ statuses: Record<string, string> }>(
      `/v1/tenants/${tenant}/disputes/${disputeId}/resolution`,
      {
        outcome: 'keep-one',
        memoryId: braga.id,
        reason: 'the field visit is the newer, first-hand statement',
      },
    );
    for (const [id, status] of Object.entries(resolved.statuses)) say(`   ${id}  disputed → ${status}`);
    const history = await agent.post<{
      results: { memory: { content: string; status: string; validFrom: string; validTo: string | null } }[];
    }>(`/v1/tenants/${tenant}/search`, { query: 'where does Ana live', k: 2, intent: 'history' });
    for (const r of history.results) {
      say(
        `      history: ${r.memory.content.padEnd(22)} ${r.memory.status.padEnd(10)} valid ${r.memory.validFrom.slice(0, 10)} … ${r.memory.validTo?.slice(0, 10) ?? ''}`,
      );
    }

    step('7. The DPO erases Ana: the six-step deletion closure, ending in a signed certificate');
    const filed = await dpo.post<{ id: string }>(`/v1/tenants/${tenant}/erasure-requests`, {
      selector: { subjectId: 'customer-ana' },
      legalGround: 'art17-1a',
    });
    const erasureStarted = Date.now();
    let view: { state: string; steps: { step: string; counts: Record<string, number> }[]; certificateIds: string[] };
    for (;;) {
      view = await dpo.get(`/v1/tenants/${tenant}/erasure-requests/${filed.id}`);
      if (!['received', 'running'].includes(view.state) || Date.now() - erasureStarted > 240_000) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    say(`   ${filed.id}  ${view.state} in ${((Date.now() - erasureStarted) / 1000).toFixed(1)} s`);
    for (const s of view.steps) {
      say(
        `      ${s.step.padEnd(10)} ${Object.entries(s.counts)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      );
    }
    if (view.state !== 'completed') throw new Error(`the erasure ended ${view.state}`);
    const after = await agent.post<{ results: { memory: { subjects: string[] } }[] }>(`/v1/tenants/${tenant}/search`, {
      query: 'Ana Porto Braga e-mail bakery',
      intent: 'history',
    });
    const aboutAna = after.results.filter((r) => r.memory.subjects.includes('customer-ana')).length;
    const others = [...new Set(after.results.flatMap((r) => r.memory.subjects))].join(', ') || 'none';
    say(
      `   search for Ana afterwards → ${aboutAna} about Ana (${after.results.length} others' records ranked: ${others})`,
    );
    const relearn = await agent
      .post(`/v1/tenants/${tenant}/batches`, { events: (sample as { events: unknown[] }).events.slice(0, 1) })
      .then(() => 'accepted (!)')
      .catch((e: Error) => `refused: ${e.message}`);
    say(`   re-ingesting Ana's first event → ${relearn}`);
    const certificates = await auditor.getText(`/v1/tenants/${tenant}/certificates`);
    const auditExport = await auditor.getText(`/v1/tenants/${tenant}/audit`);
    const checked = verifyCertificatesJsonl(
      { certificates, audit: auditExport },
      { publicKeys: await auditor.getText(`/v1/tenants/${tenant}/certificates/public-key`) },
    );
    say(
      checked.ok
        ? `   ✓ offline: ${checked.count} certificate(s), Ed25519 signatures, chain and audit anchors verified (${view.certificateIds.join(', ')})`
        : `   ✗ ${JSON.stringify(checked)}`,
    );

    step('8. A notification through SMTP, read back from the capture server');
    const subject = `Lethe demo for ${tenant}`;
    await runtime.mail.sendMail({
      from: config.smtp.from,
      to: 'dpo@example.test',
      subject,
      text: `Tenant ${tenant} ingested ${batch.memories.length} memories.`,
    });
    const mail = await waitForMessage(loadStackConfig().smtp.captureDir, (m) => m.subject === subject);
    say(`   captured: "${mail.subject}" → ${mail.to.join(', ')}`);

    step('9. The audit chain, exported and verified offline');
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
