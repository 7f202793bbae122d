/**
 * The CLI's exit codes and its `--json` output, through the real process (`node bin/lethe.mjs …`) against an API
 * listening on a real port, with its worker, on the real stack. Every documented code is provoked the way a user
 * meets it; "a server unreachable" (6) by pointing the CLI at a closed local port, so that the shared stack keeps
 * running. Then every command, with `--json`, prints JSON when it succeeds and when it fails.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { stepGate } from '../../support/step-gate.js';
import { fileErasure, waitForState } from '../../support/erasure-fixture.js';
import {
  cliEnvironment,
  closedPort,
  listenOnRealPort,
  REPO_DIR,
  runLethe,
  type ProcessRun,
} from '../../support/cli-process.js';
import { ExitCode } from '../../../app/cli/exit-codes.js';
import { mintToken } from '../../../src/governance/auth/tokens.js';
import type { Role } from '../../../src/governance/auth/principal.js';

const sample = JSON.parse(
  fs.readFileSync(path.join(REPO_DIR, 'scripts', 'demo-data', 'sample-tenant.json'), 'utf8'),
) as { events: Record<string, unknown>[]; memories: Record<string, unknown>[] };

/** The main tenant: the sample, a dispute, a pending sign-off, Ana erased with a certificate, a legal hold. */
const tenant = uniqueTenant();
/** A tenant whose erasure is held before it locates anything, so that it stays `running`. */
const heldTenant = uniqueTenant();

let app: TestApp;
let env: NodeJS.ProcessEnv;
let dir: string;
let releaseGate: () => void = () => undefined;
const gate = new Promise<void>((resolve) => (releaseGate = resolve));
const ids = { erased: '', held: '', certificate: '', candidate: '', dispute: '', disputeSide: '', hold: '' };
const files = { audit: '', certs: '', empty: '', batch: '', notJson: '', erasedEvent: '', orphan: '' };

const token = (roles: Role[], principal = `${roles[0]}-1`, forTenant = tenant) =>
  app.token(forTenant, roles, principal);

/** `node bin/lethe.mjs <args>` with the given token (or none) in LETHE_TOKEN. */
async function lethe(args: string[], options: { token?: string; env?: NodeJS.ProcessEnv } = {}): Promise<ProcessRun> {
  return runLethe(args, { env: { ...env, ...(options.token ? { LETHE_TOKEN: options.token } : {}), ...options.env } });
}

function describeRun(run: ProcessRun): string {
  return `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
}

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

async function post<T>(url: string, payload: object, bearer: string, status: number): Promise<T> {
  const response = await app.request({ method: 'POST', url, token: bearer, payload });
  expect(response.statusCode, response.body).toBe(status);
  return response.json<T>();
}

beforeAll(async () => {
  app = await startTestApp({
    activityInterceptors: [
      stepGate(async (activity, input) => {
        if (activity === 'locateTargets' && input.tenant === heldTenant) await gate;
      }),
    ],
  });
  env = cliEnvironment(app, await listenOnRealPort(app));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-exit-codes-'));

  const batches = `/v1/tenants/${tenant}/batches`;
  const written = await post<{ memories: { id: string; status: string }[] }>(
    batches,
    sample,
    await token(['agent'], 'agent-7'),
    201,
  );
  ids.candidate = written.memories.find((m) => m.status === 'candidate')!.id;
  // Another agent contradicts the sample's "single monthly invoice": a dispute for the reviewer commands.
  const contradiction = await post<{ memories: { id: string; status: string }[] }>(
    batches,
    {
      events: [
        {
          ...sample.events[3],
          externalId: 'call-88',
          occurredAt: '2026-10-20T10:00:00Z',
          content: 'Ben asked for one invoice per order.',
        },
      ],
      memories: [
        {
          ...sample.memories[3],
          content: 'Ben wants one invoice per order.',
          validFrom: '2026-10-20T10:00:00Z',
          provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-preference' },
        },
      ],
    },
    await token(['agent'], 'agent-9'),
    201,
  );
  expect(contradiction.memories[0]!.status).toBe('disputed');
  ids.disputeSide = contradiction.memories[0]!.id;
  const dispute = await app.services.disputes.listOpen(tenant, 10);
  ids.dispute = dispute[0]!._id;
  const hold = await post<{ id: string }>(
    `/v1/tenants/${tenant}/legal-holds`,
    { scope: { subjectId: 'customer-zed' }, caseRef: 'CASE-1' },
    await token(['legal']),
    201,
  );
  ids.hold = hold.id;

  await post(
    `/v1/tenants/${heldTenant}/batches`,
    { events: [{ ...sample.events[0], subjects: ['customer-dora'], content: 'Dora asked about her order.' }] },
    await token(['agent'], 'agent-7', heldTenant),
    201,
  );
  ids.held = await fileErasure(app, heldTenant, { subjectId: 'customer-dora' });

  ids.erased = await fileErasure(app, tenant, { subjectId: 'customer-ana' });
  const done = await waitForState(app, tenant, ids.erased, ['completed', 'partial', 'needs-operator', 'rejected']);
  expect(done.state).toBe('completed');
  ids.certificate = (await app.services.certificates.byRequest(tenant, ids.erased))[0]!.certificateId;

  const auditor = await token(['auditor']);
  const exports = await Promise.all([
    app.request({ method: 'GET', url: `/v1/tenants/${tenant}/audit`, token: auditor }),
    app.request({ method: 'GET', url: `/v1/tenants/${tenant}/certificates`, token: auditor }),
  ]);
  files.audit = write('audit.jsonl', exports[0].body);
  files.certs = write('certs.jsonl', exports[1].body);
  files.empty = write('empty.jsonl', '');
  files.batch = write(
    'batch.json',
    JSON.stringify({ events: [{ ...sample.events[4], externalId: 'chat-2003', content: 'Ben called again.' }] }),
  );
  files.notJson = write('not-json.json', '{ "events": [');
  files.erasedEvent = write('erased-event.json', JSON.stringify({ events: [sample.events[0]] }));
  files.orphan = write(
    'orphan.json',
    JSON.stringify({
      memories: [
        {
          ...sample.memories[3],
          provenance: {
            eventIds: [],
            parentIds: ['mem_00000000-0000-0000-0000-000000000000'],
            derivationRule: 'summarise',
          },
        },
      ],
    }),
  );
}, 120_000);

afterAll(async () => {
  releaseGate();
  if (app) {
    await waitForState(app, heldTenant, ids.held, ['completed', 'partial', 'needs-operator', 'rejected']).catch(
      () => undefined,
    );
    await app.services.retentionScheduler.retire(tenant);
    await app.services.retentionScheduler.retire(heldTenant);
    await app.close();
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe.concurrent('the exit codes of the CLI', () => {
  it('are the ones docs/operations.md lists, each with its meaning', ({ expect }) => {
    const readme = fs.readFileSync(path.join(REPO_DIR, 'docs', 'operations.md'), 'utf8');
    const listed = /CLI exit codes: ([^.]+)\./.exec(readme)?.[1] ?? '';
    const documented = [...listed.matchAll(/(?:^|, )(\d) /g)].map((m) => Number(m[1]));
    expect(documented).toEqual(Object.values(ExitCode).sort((a, b) => a - b));
  });

  it('0: a command that did what was asked', async ({ expect }) => {
    const run = await lethe(['search', 'invoice'], { token: await token(['agent'], 'agent-7') });
    expect(run.code, describeRun(run)).toBe(ExitCode.ok);
    expect(run.stdout).toMatch(/^\d+\.\d{4} {2}mem_\S+ {2}\[/);
    expect(run.stderr).toBe('');
  });

  it('1: `erasure status --wait` gives up while the request is still running', async ({ expect }) => {
    const run = await lethe(['erasure', 'status', ids.held, '--wait', '1'], {
      token: await token(['dpo'], 'dpo-1', heldTenant),
    });
    expect(run.code, describeRun(run)).toBe(ExitCode.failure);
    // Held before it locates anything: still received or running when the wait ends.
    expect(run.stdout).toMatch(new RegExp(`^${ids.held} {2}(received|running) `));
    expect(run.stderr).toMatch(/^lethe: --wait: the request is still (received|running) after 1 s\n$/);
  });

  it('2: a bad argument, named, before anything is sent', async ({ expect }) => {
    const run = await lethe(['search', 'invoice', '--k', '0'], { token: await token(['agent']) });
    expect(run.code, describeRun(run)).toBe(ExitCode.usage);
    expect(run.stderr).toBe('lethe: --k: a whole number from 1 to 100\n');
  });

  it('2: a required option left out', async ({ expect }) => {
    const run = await lethe(['erasure', 'request', '--subject', 'customer-ben'], { token: await token(['dpo']) });
    expect(run.code, describeRun(run)).toBe(ExitCode.usage);
    expect(run.stderr).toContain("required option '--ground <ground>' not specified");
  });

  it('2: input the API refuses as invalid, naming the field', async ({ expect }) => {
    const run = await lethe(['erasure', 'request', '--subject', 'customer-ben', '--ground', 'art99'], {
      token: await token(['dpo']),
    });
    expect(run.code, describeRun(run)).toBe(ExitCode.usage);
    expect(run.stderr).toMatch(/^lethe: legalGround: /);
  });

  it('3: a principal whose role may not do it', async ({ expect }) => {
    const run = await lethe(['audit', 'export'], { token: await token(['agent']) });
    expect(run.code, describeRun(run)).toBe(ExitCode.denied);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^lethe: .*403|^lethe: authorization: /);
  });

  it('3: a token the API did not issue', async ({ expect }) => {
    const forged = await mintToken('x'.repeat(43), { id: 'agent-7', tenant, roles: ['agent'] });
    const run = await lethe(['search', 'invoice'], { token: forged });
    expect(run.code, describeRun(run)).toBe(ExitCode.denied);
    expect(run.stderr).toBe('lethe: authorization: token invalid\n');
  });

  it('2: a token lifetime beyond the configured maximum is never minted, naming --ttl', async ({ expect }) => {
    const args = ['token', 'mint', '--tenant', tenant, '--principal', 'agent-7', '--roles', 'agent'];
    const endless = await lethe([...args, '--ttl', String(400 * 86_400)]);
    expect(endless.code, describeRun(endless)).toBe(ExitCode.usage);
    expect(endless.stdout).toBe('');
    expect(endless.stderr).toMatch(/^lethe: --ttl: must be a whole number of seconds from 1 to \d+/);
    const day = await lethe([...args, '--ttl', '86400']);
    expect(day.code, describeRun(day)).toBe(ExitCode.ok);
  });

  it('4: an id the tenant does not have', async ({ expect }) => {
    const run = await lethe(['erasure', 'status', 'era_000000000000000000000000'], { token: await token(['dpo']) });
    expect(run.code, describeRun(run)).toBe(ExitCode.notFound);
    expect(run.stderr).toMatch(/^lethe: .*not found/);
  });

  it('5: a write citing a record the tenant does not hold (lineage)', async ({ expect }) => {
    const run = await lethe(['ingest', files.orphan], { token: await token(['agent'], 'agent-7') });
    expect(run.code, describeRun(run)).toBe(ExitCode.refused);
    expect(run.stderr).toBe('lethe: memories.0.provenance.parentIds.0: no such record in this tenant\n');
  });

  it('5: an erased event delivered again (tombstone)', async ({ expect }) => {
    // An agent is refused without being told of the erasure; a caller with erasure rights is told.
    const run = await lethe(['ingest', files.erasedEvent], { token: await token(['agent'], 'agent-7') });
    expect(run.code, describeRun(run)).toBe(ExitCode.refused);
    expect(run.stderr).toMatch(/^lethe: .*not admitted now/);
    expect(run.stderr).not.toMatch(/erased|tombstone/i);
    const admin = await lethe(['ingest', files.erasedEvent], { token: await token(['admin'], 'ops-1') });
    expect(admin.code, describeRun(admin)).toBe(ExitCode.refused);
    expect(admin.stderr).toMatch(/^lethe: .*(erased|tombstone)/i);
  });

  it('6: no API listening where the CLI is pointed', async ({ expect }) => {
    const api = `http://127.0.0.1:${await closedPort()}`;
    const run = await lethe(['--api', api, 'search', 'invoice'], { token: await token(['agent']) });
    expect(run.code, describeRun(run)).toBe(ExitCode.unavailable);
    expect(run.stderr).toContain(`lethe: cannot reach the Lethe API at ${api}`);
  });

  it('7: `verify` of an export that holds no certificate', async ({ expect }) => {
    const run = await lethe(['verify', files.empty, '--public-key', await publicKeyFile()]);
    expect(run.code, describeRun(run)).toBe(ExitCode.verificationFailed);
    expect(run.stdout).toBe('FAILED: the export holds no certificates (--allow-empty accepts that)\n');
  });

  it('7: `verify` of a certificate changed after it was signed', async ({ expect }) => {
    const tampered = write(
      'tampered-certs.jsonl',
      fs.readFileSync(files.certs, 'utf8').replace('"complete"', '"partial"'),
    );
    const run = await lethe(['verify', tampered, '--public-key', await publicKeyFile(), '--audit', files.audit]);
    expect(run.code, describeRun(run)).toBe(ExitCode.verificationFailed);
    expect(run.stdout).toMatch(new RegExp(`^FAILED at line 1 \\(certificate ${ids.certificate}, seq 1\\): `));
  });

  it('7: `audit verify` of an export with one entry changed', async ({ expect }) => {
    const lines = fs.readFileSync(files.audit, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"outcome":"ok"', '"outcome":"denied"');
    const run = await lethe(['audit', 'verify', write('tampered-audit.jsonl', lines.join('\n'))]);
    expect(run.code, describeRun(run)).toBe(ExitCode.verificationFailed);
    expect(run.stdout).toMatch(/^FAILED at line 2 \(seq 2\): /);
  });
});

let keyFile: Promise<string> | undefined;
/** The public key as `certificates public-key` prints it. */
function publicKeyFile(): Promise<string> {
  keyFile ??= lethe(['certificates', 'public-key']).then((run) => {
    expect(run.code, describeRun(run)).toBe(0);
    return write('key.pem', run.stdout);
  });
  return keyFile;
}

interface JsonCase {
  /** The command, as its group and name. */
  command: string;
  ok: () => Promise<{ args: string[]; token?: string }>;
  /** How it fails, and with which exit code. */
  fails: () => Promise<{ args: string[]; token?: string; env?: NodeJS.ProcessEnv }>;
  failsWith: number;
  /** Exports print one JSON document per line. */
  lines?: boolean;
  /** A verification's verdict is its output, on stdout, when it fails too. */
  verdict?: boolean;
}

const JSON_CASES: JsonCase[] = [
  {
    command: 'token mint',
    ok: async () => ({ args: ['token', 'mint', '--tenant', tenant, '--principal', 'agent-7', '--roles', 'agent'] }),
    fails: async () => ({ args: ['token', 'mint', '--tenant', tenant, '--principal', 'agent-7', '--roles', 'wizard'] }),
    failsWith: ExitCode.usage,
  },
  {
    command: 'ingest',
    ok: async () => ({ args: ['ingest', files.batch], token: await token(['agent'], 'agent-7') }),
    fails: async () => ({ args: ['ingest', files.notJson], token: await token(['agent'], 'agent-7') }),
    failsWith: ExitCode.usage,
  },
  {
    command: 'search',
    ok: async () => ({ args: ['search', 'invoice'], token: await token(['agent']) }),
    fails: async () => ({ args: ['search', 'invoice', '--intent', 'someday'], token: await token(['agent']) }),
    failsWith: ExitCode.usage,
  },
  {
    command: 'retrieve',
    ok: async () => ({ args: ['retrieve', 'invoice', '--budget', '500'], token: await token(['agent']) }),
    fails: async () => ({ args: ['retrieve', 'invoice', '--budget', '0'], token: await token(['agent']) }),
    failsWith: ExitCode.usage,
  },
  {
    command: 'audit export',
    lines: true,
    ok: async () => ({ args: ['audit', 'export'], token: await token(['auditor']) }),
    fails: async () => ({ args: ['audit', 'export'], token: await token(['agent']) }),
    failsWith: ExitCode.denied,
  },
  {
    command: 'audit verify',
    verdict: true,
    ok: async () => ({ args: ['audit', 'verify', files.audit] }),
    fails: async () => ({ args: ['audit', 'verify', files.audit, '--head', 'f'.repeat(64)] }),
    failsWith: ExitCode.verificationFailed,
  },
  {
    command: 'erasure request',
    // Filing the held request again answers with the open one: nothing new is started.
    ok: async () => ({
      args: ['erasure', 'request', '--subject', 'customer-dora', '--ground', 'art17-1a'],
      token: await token(['dpo'], 'dpo-1', heldTenant),
    }),
    fails: async () => ({ args: ['erasure', 'request', '--ground', 'art17-1a'], token: await token(['dpo']) }),
    failsWith: ExitCode.usage,
  },
  {
    command: 'erasure status',
    ok: async () => ({ args: ['erasure', 'status', ids.erased], token: await token(['dpo']) }),
    fails: async () => ({ args: ['erasure', 'status', 'era_000000000000000000000000'], token: await token(['dpo']) }),
    failsWith: ExitCode.notFound,
  },
  {
    command: 'erasure extend',
    ok: async () => ({
      args: ['erasure', 'extend', ids.held, '--months', '1', '--reason', 'the subject holds records in archives'],
      token: await token(['dpo'], 'dpo-1', heldTenant),
    }),
    fails: async () => ({
      args: ['erasure', 'extend', ids.erased, '--months', '1', '--reason', 'too late'],
      token: await token(['dpo']),
    }),
    failsWith: ExitCode.refused,
  },
  {
    command: 'hold place',
    ok: async () => ({
      args: ['hold', 'place', '--subject', 'customer-yan', '--case', 'CASE-2'],
      token: await token(['legal']),
    }),
    fails: async () => ({
      args: ['hold', 'place', '--subject', 'customer-yan', '--case', 'CASE-2'],
      token: await token(['agent']),
    }),
    failsWith: ExitCode.denied,
  },
  {
    command: 'hold release',
    ok: async () => ({ args: ['hold', 'release', ids.hold], token: await token(['legal']) }),
    fails: async () => ({ args: ['hold', 'release', 'hold_none'], token: await token(['legal']) }),
    failsWith: ExitCode.notFound,
  },
  {
    command: 'certificates export',
    lines: true,
    ok: async () => ({ args: ['certificates', 'export'], token: await token(['auditor']) }),
    fails: async () => ({
      args: ['certificates', 'export', '--from', 'last tuesday'],
      token: await token(['auditor']),
    }),
    failsWith: ExitCode.usage,
  },
  {
    command: 'certificates get',
    ok: async () => ({ args: ['certificates', 'get', ids.certificate], token: await token(['auditor']) }),
    fails: async () => ({ args: ['certificates', 'get', 'crt_none'], token: await token(['auditor']) }),
    failsWith: ExitCode.notFound,
  },
  {
    command: 'certificates public-key',
    ok: async () => ({ args: ['certificates', 'public-key'] }),
    fails: async () => ({
      args: ['certificates', 'public-key'],
      env: { LETHE_SIGNING_KEY_FILE: path.join(dir, 'no-such-key.pem') },
    }),
    failsWith: ExitCode.usage,
  },
  {
    command: 'verify',
    verdict: true,
    ok: async () => ({ args: ['verify', files.certs, '--public-key', await publicKeyFile(), '--audit', files.audit] }),
    fails: async () => ({ args: ['verify', files.empty, '--public-key', await publicKeyFile()] }),
    failsWith: ExitCode.verificationFailed,
  },
  {
    command: 'policy check',
    ok: async () => ({ args: ['policy', 'check'] }),
    fails: async () => ({ args: ['policy', 'check', '--dir', path.join(dir, 'no-such-dir')] }),
    failsWith: ExitCode.usage,
  },
  {
    command: 'restore reapply-erasures',
    // A tenant that never wrote anything: nothing to replay, nothing changed.
    ok: async () => ({ args: ['restore', 'reapply-erasures', '--tenant', uniqueTenant()] }),
    fails: async () => ({ args: ['restore', 'reapply-erasures', '--tenant', 'Not A Tenant'] }),
    failsWith: ExitCode.usage,
  },
  {
    command: 'reembed',
    ok: async () => ({ args: ['reembed', '--wait', '120'], token: await token(['admin'], 'ops-1') }),
    fails: async () => ({ args: ['reembed'], token: await token(['agent']) }),
    failsWith: ExitCode.denied,
  },
  {
    command: 'review queue',
    ok: async () => ({ args: ['review', 'queue'], token: await token(['reviewer'], 'rita') }),
    fails: async () => ({ args: ['review', 'queue', '--type', 'urgent'], token: await token(['reviewer'], 'rita') }),
    failsWith: ExitCode.usage,
  },
  {
    command: 'review show',
    ok: async () => ({ args: ['review', 'show', ids.dispute], token: await token(['reviewer'], 'rita') }),
    fails: async () => ({ args: ['review', 'show', ids.dispute], token: await token(['agent']) }),
    failsWith: ExitCode.denied,
  },
  {
    command: 'review decide',
    ok: async () => ({
      args: ['review', 'decide', ids.candidate, '--approve', '--reason', 'matches the signed contract'],
      token: await token(['reviewer'], 'rita'),
    }),
    fails: async () => ({
      args: ['review', 'decide', 'mem_00000000-0000-0000-0000-000000000000', '--approve', '--reason', 'why not'],
      token: await token(['reviewer'], 'rita'),
    }),
    failsWith: ExitCode.notFound,
  },
  {
    command: 'review resolve',
    ok: async () => ({
      args: ['review', 'resolve', ids.dispute, '--keep', ids.disputeSide, '--reason', 'the customer confirmed it'],
      token: await token(['reviewer'], 'rita'),
    }),
    fails: async () => ({
      args: ['review', 'resolve', 'dsp_none', '--keep', ids.disputeSide, '--reason', 'the customer confirmed it'],
      token: await token(['reviewer'], 'rita'),
    }),
    failsWith: ExitCode.notFound,
  },
];

describe.concurrent('--json', () => {
  it.for(JSON_CASES.map((c) => [c.command, c] as const))(
    '%s prints JSON when it succeeds and when it fails',
    async ([, c], { expect }) => {
      const ok = await c.ok();
      const failing = await c.fails();
      const [success, failure] = await Promise.all([
        lethe(['--json', ...ok.args], { ...(ok.token ? { token: ok.token } : {}) }),
        lethe(['--json', ...failing.args], {
          ...(failing.token ? { token: failing.token } : {}),
          ...(failing.env ? { env: failing.env } : {}),
        }),
      ]);

      expect(success.code, describeRun(success)).toBe(ExitCode.ok);
      const documents = c.lines ? success.stdout.split('\n').filter(Boolean) : [success.stdout];
      expect(documents.length, describeRun(success)).toBeGreaterThan(0);
      for (const document of documents) expect(() => JSON.parse(document) as unknown, document).not.toThrow();
      if (c.verdict) expect(JSON.parse(success.stdout)).toMatchObject({ ok: true });

      expect(failure.code, describeRun(failure)).toBe(c.failsWith);
      if (c.verdict) {
        expect(JSON.parse(failure.stdout)).toMatchObject({ ok: false });
      } else {
        expect(failure.stdout).toBe('');
        expect(JSON.parse(failure.stderr)).toEqual({ error: { message: expect.any(String), exitCode: c.failsWith } });
      }
    },
  );

  it('`erasure retry` prints its refusal as JSON (its success needs a request parked for an operator)', async ({
    expect,
  }) => {
    // Ana's request finished: a retry is refused by a rule (409 → 5), naming the state it is in.
    const failure = await lethe(['--json', 'erasure', 'retry', ids.erased], { token: await token(['dpo']) });
    expect(failure.code, describeRun(failure)).toBe(ExitCode.refused);
    expect(failure.stdout).toBe('');
    expect(JSON.parse(failure.stderr)).toEqual({
      error: {
        message: expect.stringMatching(/is (completed|partial), not needs-operator/),
        exitCode: ExitCode.refused,
      },
    });
  });
});
