import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';
import type { ErasureDetail } from '../../../src/shared/api-contract/erasure.js';

/** A request's status as the API answers it. */
type ErasureView = ErasureDetail;

/** States a request is still being worked in; `--wait` polls until it leaves them. */
const IN_FLIGHT = ['received', 'running'];
const DEFAULT_WAIT_SECONDS = 300;
const WAIT_POLL_MS = 1000;

function waitSeconds(value: string | true): number {
  if (value === true) return DEFAULT_WAIT_SECONDS;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1)
    throw new CliError('--wait: a whole number of seconds ≥ 1', ExitCode.usage);
  return seconds;
}

function printStatus(ctx: CliContext, view: ErasureView): void {
  if (ctx.json) return ctx.print(view);
  ctx.print(`${view.id}  ${view.state}  (ground ${view.legalGround}, due ${view.dueAt.slice(0, 10)})`);
  for (const s of view.steps) {
    const counts = Object.entries(s.counts)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    ctx.print(`  ${s.step.padEnd(10)} ${s.state.padEnd(8)} ${s.startedAt}  ${counts}`);
  }
  if (view.progress.total > 0) ctx.print(`  progress   ${view.progress.purged}/${view.progress.total} purged`);
  if (view.holdIds.length > 0) ctx.print(`  holds      ${view.holdIds.join(', ')}`);
  if (view.certificateIds.length > 0) ctx.print(`  certificates ${view.certificateIds.join(', ')}`);
  if (view.note) ctx.print(`  note       ${view.note}`);
  for (const f of view.findings ?? []) {
    ctx.print(`  copy       ${f.id} (${f.kind}) ${f.resolution}, found by ${f.probes.join(', ')}`);
  }
}

interface SelectorOptions {
  subject?: string;
  memory?: string[];
  fingerprint?: string;
  validFrom?: string;
  validTo?: string;
}

function withSelectorOptions(command: Command): Command {
  return command
    .option('--subject <id>', 'a data subject id')
    .option('--memory <ids...>', 'memory ids')
    .option('--fingerprint <sha256>', 'SHA-256 (hex) of the content')
    .option('--valid-from <instant>', 'with --valid-to: records whose valid time starts in the range')
    .option('--valid-to <instant>');
}

/** Exactly one way of naming the records, as the API's selector. */
function selectorOf(o: SelectorOptions): object {
  const selectors = [
    o.subject ? { subjectId: o.subject } : null,
    o.memory ? { memoryIds: o.memory } : null,
    o.fingerprint ? { contentFingerprint: o.fingerprint } : null,
    o.validFrom || o.validTo ? { validTime: { from: o.validFrom, to: o.validTo } } : null,
  ].filter((s) => s !== null);
  if (selectors.length !== 1)
    throw new CliError(
      'selector: give exactly one of --subject, --memory, --fingerprint, --valid-from/--valid-to',
      ExitCode.usage,
    );
  return selectors[0]!;
}

interface PreviewView {
  located: { events: number; memories: number };
  derived: { total: number; collateral: number };
  memoriesByStatus: Record<string, number>;
  events: number;
  held: { records: number; holdIds: string[] };
  readers: { principal: string; retrievals: number; prompts: number; lastRetrievedAt: string }[];
  ids: { located: string[]; derived: string[]; held: string[]; truncated: boolean };
}

function printPreview(ctx: CliContext, p: PreviewView): void {
  if (ctx.json) return ctx.print(p);
  const statuses = Object.entries(p.memoriesByStatus)
    .map(([status, n]) => `${status}=${n}`)
    .join(' ');
  ctx.print(`located    ${p.located.events} events, ${p.located.memories} memories`);
  ctx.print(`derived    ${p.derived.total} (collateral ${p.derived.collateral})`);
  ctx.print(`memories   ${statuses || 'none'}`);
  ctx.print(`held       ${p.held.records}${p.held.holdIds.length > 0 ? ` by ${p.held.holdIds.join(', ')}` : ''}`);
  for (const r of p.readers)
    ctx.print(`read by    ${r.principal}: ${r.retrievals} reads, ${r.prompts} in prompts, last ${r.lastRetrievedAt}`);
}

export function registerErasureCommands(program: Command, context: () => CliContext): void {
  const erasure = program.command('erasure').description('erasure requests (the six-step deletion closure)');
  withSelectorOptions(
    erasure
      .command('request')
      .description('file an erasure request; filing the same request again returns the open one'),
  )
    .requiredOption('--ground <ground>', 'art17-1a … art17-1f, retention-expiry, correction')
    .option('--key <key>', 'an idempotency key of your own')
    .action(async (o: SelectorOptions & { ground: string; key?: string }) => {
      const selector = selectorOf(o);
      const ctx = context();
      const view = await ctx.api.post<ErasureView>(`/v1/tenants/${ctx.tenant}/erasure-requests`, {
        selector,
        legalGround: o.ground,
        ...(o.key ? { requestKey: o.key } : {}),
      });
      printStatus(ctx, view);
    });
  withSelectorOptions(
    erasure
      .command('preview')
      .description('what a request with this selector would reach if filed now (ids and counts; nothing is changed)'),
  ).action(async (o: SelectorOptions) => {
    const selector = selectorOf(o);
    const ctx = context();
    const preview = await ctx.api.post<PreviewView>(`/v1/tenants/${ctx.tenant}/subject-rights/preview`, { selector });
    printPreview(ctx, preview);
  });
  erasure
    .command('status <id>')
    .description('the state of a request, step by step')
    .option(
      '--wait [seconds]',
      `poll until the request is no longer ${IN_FLIGHT.join(' or ')} (at most ${DEFAULT_WAIT_SECONDS} s, or as given)`,
    )
    .action(async (id: string, o: { wait?: string | true }) => {
      const limit = o.wait === undefined ? 0 : waitSeconds(o.wait);
      const ctx = context();
      const read = () =>
        ctx.api.get<ErasureView>(`/v1/tenants/${ctx.tenant}/erasure-requests/${encodeURIComponent(id)}`);
      const deadline = Date.now() + limit * 1000;
      let view = await read();
      while (IN_FLIGHT.includes(view.state) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
        view = await read();
      }
      printStatus(ctx, view);
      // A script that waited must not go on as if the request had settled.
      if (o.wait !== undefined && IN_FLIGHT.includes(view.state))
        throw new CliError(`--wait: the request is still ${view.state} after ${limit} s`, ExitCode.failure);
    });
  erasure
    .command('extend <id>')
    .description('extend the GDPR deadline (at most two more months in total)')
    .requiredOption('--months <n>', '1 or 2')
    .requiredOption('--reason <text>', 'why (recorded; the DPO is notified)')
    .action(async (id: string, o: { months: string; reason: string }) => {
      const ctx = context();
      ctx.print(
        await ctx.api.post(`/v1/tenants/${ctx.tenant}/erasure-requests/${encodeURIComponent(id)}/extension`, {
          months: Number(o.months),
          reason: o.reason,
        }),
      );
    });
  erasure
    .command('findings <id>')
    .description('decide on copies of erased content found outside the closure (the request waits in needs-dpo)')
    .option('--extend', 'erase the copies too, in another round of this request')
    .option('--certify', 'leave the copies and certify with them named as findings')
    .requiredOption('--reason <text>', 'why (kept as a keyed hash)')
    .action(async (id: string, o: { extend?: boolean; certify?: boolean; reason: string }) => {
      if (Boolean(o.extend) === Boolean(o.certify))
        throw new CliError('decision: give exactly one of --extend, --certify', ExitCode.usage);
      const ctx = context();
      ctx.print(
        await ctx.api.post(`/v1/tenants/${ctx.tenant}/erasure-requests/${encodeURIComponent(id)}/findings`, {
          decision: o.extend ? 'extend' : 'certify',
          reason: o.reason,
        }),
      );
    });
  erasure
    .command('retry <id>')
    .description('after following the runbook, retry the step a needs-operator request is stuck at')
    .action(async (id: string) => {
      const ctx = context();
      ctx.print(await ctx.api.post(`/v1/tenants/${ctx.tenant}/erasure-requests/${encodeURIComponent(id)}/retry`, {}));
    });

  const hold = program.command('hold').description('legal holds');
  hold
    .command('place')
    .description('place a legal hold by subject, records or namespace')
    .option('--subject <id>')
    .option('--records <ids...>')
    .option('--namespace <ns>')
    .requiredOption('--case <ref>', 'the case or matter reference')
    .action(async (o: { subject?: string; records?: string[]; namespace?: string; case: string }) => {
      const scopes = [
        o.subject ? { subjectId: o.subject } : null,
        o.records ? { recordIds: o.records } : null,
        o.namespace ? { namespace: o.namespace } : null,
      ].filter(Boolean);
      if (scopes.length !== 1)
        throw new CliError('scope: give exactly one of --subject, --records, --namespace', ExitCode.usage);
      const ctx = context();
      ctx.print(await ctx.api.post(`/v1/tenants/${ctx.tenant}/legal-holds`, { scope: scopes[0], caseRef: o.case }));
    });
  hold
    .command('release <id>')
    .description('release a legal hold; erasures it blocked resume')
    .action(async (id: string) => {
      const ctx = context();
      ctx.print(await ctx.api.post(`/v1/tenants/${ctx.tenant}/legal-holds/${encodeURIComponent(id)}/release`, {}));
    });
}
