/**
 * The README's CLI walkthrough, run as written. Every command of README.md's fenced `sh` blocks is read from the
 * README when this test runs and run in its order through bash, in a scratch directory that mirrors the checkout,
 * against an API listening on a real port with a worker of its own behind it:
 *
 * - `npx lethe` is this checkout's CLI (`node bin/lethe.mjs`), with the test app's API URL and secrets;
 * - the README's example tenant (the first `--tenant` it names) becomes a tenant of this test;
 * - a `<placeholder>` gets the id an earlier command printed (`<request-id>` from `erasure request`, `<mem_…>` and
 *   `<dsp_…>` from `review queue`); `<a | b>` runs the command once with each;
 * - variables a command exports are there for the next ones, as in one shell session.
 *
 * Each command must exit 0 and print what it promises (a check per `lethe` command below: a command this test
 * does not know fails until one is written). The commands that install, bring the stack or a server up, or run
 * the suite or a benchmark are not run: see NOT_RUN.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { cliEnvironment, LETHE_BIN, listenOnRealPort, REPO_DIR, runProcess } from '../../support/cli-process.js';
import {
  letheCallOf,
  optionValue,
  readmeShellCommands,
  splitOutside,
  type LetheCall,
  type ReadmeCommand,
} from './readme-shell.js';

/**
 * Not run here: installing (`npm ci`), bringing up the local stack or the servers (`npm run stack:up`, `npm run
 * demo`, `npm run api`, `npm run worker`), stopping the shared stack (`npm run stack:down`), the whole suite
 * (`npm test`) and the benchmarks. This test runs on the stack that is already up, with an API and a worker of its
 * own. A command is set aside only when every part of its `&&` chain is one of these.
 */
const NOT_RUN = [/^npm ci$/, /^npm test$/, /^npm run (?:demo|stack:up|stack:down|api|worker|bench:[\w-]+)$/];

const markdown = fs.readFileSync(path.join(REPO_DIR, 'README.md'), 'utf8');
const packageScripts = (
  JSON.parse(fs.readFileSync(path.join(REPO_DIR, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;
const commands = readmeShellCommands(markdown);
const notRun = (command: ReadmeCommand) =>
  splitOutside(command.text, '&&').every((part) => NOT_RUN.some((pattern) => pattern.test(part)));
/** The README's example tenant: the first one a command names. */
const exampleTenant = /--tenant\s+(\S+)/.exec(commands.map((c) => c.text).join('\n'))?.[1];

interface Walk {
  tenant: string;
  /** The shell session's exported variables, carried from one command to the next. */
  env: NodeJS.ProcessEnv;
  requestId?: string;
  accessId?: string;
  rectificationId?: string;
  restrictionId?: string;
  certificateIds: string[];
  signOffs: string[];
  disputes: { id: string; memoryIds: string[] }[];
  disputeOpened: boolean;
}

interface BashRun {
  code: number;
  stdout: string;
  stderr: string;
}

interface CheckInput {
  call: LetheCall;
  /** What the call printed: its stdout, the file it was redirected to, or the variable it was assigned to. */
  output: string;
  walk: Walk;
}

/** Per `lethe` command: the key piece of what it must print, and what later placeholders learn from it. */
const CHECKS: Record<string, (input: CheckInput) => void> = {
  'token mint': ({ call, output, walk }) => {
    const claims = decodeJwt(output.trim());
    expect(claims).toMatchObject({ tenant: walk.tenant, sub: optionValue(call.words, '--principal') });
    expect(claims.roles).toEqual(optionValue(call.words, '--roles')?.split(','));
  },
  ingest: ({ call, output }) => {
    const batch = JSON.parse(fs.readFileSync(path.join(workDir, call.words[1]!), 'utf8')) as {
      events: unknown[];
      memories: unknown[];
    };
    expect(output).toMatch(
      new RegExp(
        `^ingested ${batch.events.length} event\\(s\\) \\(0 already known\\) and ${batch.memories.length} memory record\\(s\\)`,
      ),
    );
  },
  search: ({ output }) => {
    const lines = output.trim().split('\n');
    expect(lines.length, output).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/^\d+\.\d{4} {2}mem_\S+ {2}\[(active|disputed), /);
  },
  retrieve: ({ call, output }) => {
    const [head, ...items] = output.trim().split('\n');
    const budget = optionValue(call.words, '--budget') ?? '2000';
    const summary = new RegExp(
      `^retrieval rtv_\\S+: (\\d+) items, (\\d+)/${budget} tokens; \\d+ candidates, 0 refused, 0 unresolved`,
    );
    const [, count, used] = summary.exec(head ?? '') ?? [];
    expect(head, output).toMatch(summary);
    expect(Number(count)).toBeGreaterThan(0);
    expect(Number(used)).toBeLessThanOrEqual(Number(budget));
    expect(items).toHaveLength(Number(count));
    for (const line of items) expect(line).toMatch(/^mem_\S+ v\d+ {2}\[(active|disputed), /);
  },
  'audit export': ({ output, walk }) => {
    const entries = jsonLines(output) as { seq: number; tenant: string; hash: string }[];
    expect(entries.length).toBeGreaterThan(0);
    entries.forEach((entry, i) => expect(entry).toMatchObject({ seq: i + 1, tenant: walk.tenant }));
  },
  'audit verify': ({ call, output }) => {
    const exported = jsonLines(fs.readFileSync(path.join(workDir, call.words[2]!), 'utf8'));
    expect(output).toMatch(new RegExp(`^ok: ${exported.length} entries, chain intact, head [0-9a-f]{64}$`, 'm'));
  },
  'erasure preview': ({ output }) => {
    // The sample tenant's Ana: her events and memories are located; nothing holds them yet.
    const located = /^located {4}(\d+) events, (\d+) memories$/m.exec(output);
    expect(located, output).not.toBeNull();
    expect(Number(located![1]) + Number(located![2])).toBeGreaterThan(0);
    expect(output).toMatch(/^derived {4}\d+ \(collateral \d+\)$/m);
    expect(output).toMatch(/^held {7}0$/m);
  },
  'erasure request': ({ output, walk }) => {
    const filed = /^(era_\w+) {2}(received|running|completed) /.exec(output);
    expect(filed, output).not.toBeNull();
    walk.requestId = filed![1]!;
  },
  'erasure status': ({ call, output, walk }) => {
    const id = call.words[2]!;
    const state = new RegExp(`^${id} {2}(\\S+) `).exec(output)?.[1];
    expect(state, output).toBeDefined();
    if (call.words.includes('--wait')) {
      // Waiting ends once the request has settled: here, a complete erasure with its certificate.
      expect(state).toBe('completed');
      const certificates = /^ {2}certificates (.+)$/m.exec(output)?.[1]?.split(', ') ?? [];
      expect(certificates.length, output).toBeGreaterThan(0);
      walk.certificateIds = certificates;
    }
  },
  'rights object': ({ call, output }) => {
    const purposes = optionValue(call.words, '--purposes');
    expect(output.trim()).toMatch(
      new RegExp(
        `^rst_\\w+ {2}objection to ${purposes} {2}\\(ground ${optionValue(call.words, '--ground')}, filed .+\\) {2}active$`,
      ),
    );
  },
  'rights restrict': ({ call, output, walk }) => {
    const filed = new RegExp(
      `^(rst_\\w+) {2}restriction of all processing {2}\\(ground ${optionValue(call.words, '--ground')}, filed .+\\) {2}active$`,
    ).exec(output.trim());
    expect(filed, output).not.toBeNull();
    walk.restrictionId = filed![1]!;
  },
  'rights lift': ({ call, output }) => {
    expect(output.trim()).toMatch(
      new RegExp(`^${call.words[2]!} {2}restriction of all processing .* {2}lifted by \\S+ `),
    );
  },
  'access file': ({ output, walk }) => {
    const filed = /^(acc_\w+) {2}(received|building|ready) /.exec(output);
    expect(filed, output).not.toBeNull();
    walk.accessId = filed![1]!;
  },
  'access show': ({ call, output }) => {
    const state = new RegExp(`^${call.words[2]!} {2}(\\S+) `).exec(output)?.[1];
    expect(state, output).toEqual(call.words.includes('--wait') ? 'ready' : expect.any(String));
  },
  'access download': ({ call, output }) => {
    const file = optionValue(call.words, '--out')!;
    const records = /^(\d+) records written to (\S+) \(package sha256 [0-9a-f]{64}\)$/.exec(output.trim());
    expect(records, output).not.toBeNull();
    expect(Number(records![1])).toBeGreaterThan(0);
    const pkg = JSON.parse(fs.readFileSync(path.join(workDir, file), 'utf8')) as { records: unknown[] };
    expect(pkg.records).toHaveLength(Number(records![1]));
  },
  'rectify file': ({ call, output, walk }) => {
    const filed = new RegExp(`^(rec_\\w+) {2}awaiting-review {2}memory ${optionValue(call.words, '--memory')} `).exec(
      output,
    );
    expect(filed, output).not.toBeNull();
    walk.rectificationId = filed![1]!;
  },
  'rectify show': ({ call, output }) => {
    expect(output).toMatch(new RegExp(`^${call.words[2]!} {2}awaiting-review `));
  },
  'rectify decide': ({ call, output }) => {
    // Approved: the corrected value is a record of its own, and the old one is superseded by it.
    expect(output).toMatch(new RegExp(`^${call.words[2]!} {2}applied .* corrected as mem_rec_\\w+`));
  },
  'rights receipt': ({ call, output }) => {
    const file = optionValue(call.words, '--out')!;
    expect(output.trim()).toMatch(
      new RegExp(`^rectification receipt \\(applied, audit seq \\d+\\) written to ${file}$`),
    );
    const receipt = JSON.parse(fs.readFileSync(path.join(workDir, file), 'utf8')) as { requestId: string };
    expect(receipt.requestId).toBe(call.words[2]);
  },
  'certificates export': ({ output, walk }) => {
    const certificates = jsonLines(output) as { certificateId: string; tenant: string; requestId: string }[];
    expect(certificates.length, 'the export holds certificates').toBeGreaterThan(0);
    for (const c of certificates) expect(c.tenant).toBe(walk.tenant);
    expect(certificates.map((c) => c.certificateId)).toEqual(expect.arrayContaining(walk.certificateIds));
  },
  'certificates public-key': ({ output }) => {
    expect(output).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/);
  },
  verify: ({ call, output, walk }) => {
    const text = fs.readFileSync(path.join(workDir, call.words[1]!), 'utf8');
    if (text.trimStart().startsWith('{') && text.includes('"lethe.rights-receipt"')) {
      expect(output).toMatch(
        /^ok: rectification receipt rec_\w+ \(applied\), signature valid \(key [0-9a-f]{16}\); anchored at audit seq \d+ of an intact chain$/m,
      );
      return;
    }
    if (text.trimStart().startsWith('{') && text.includes('"lethe.access-package"')) {
      expect(output).toMatch(/^ok: access package acc_\w+ \(\d+ records\), signature valid \(key [0-9a-f]{16}\)$/m);
      return;
    }
    const certificates = jsonLines(fs.readFileSync(path.join(workDir, call.words[1]!), 'utf8'));
    const plural = certificates.length === 1 ? '' : 's';
    expect(output).toMatch(
      new RegExp(
        `^ok: ${certificates.length} certificate${plural} \\(seq [^)]+\\) of tenant ${walk.tenant}; signatures valid`,
      ),
    );
    if (call.words.includes('--audit'))
      expect(output).toContain(`all ${certificates.length} anchored in an intact audit chain`);
  },
  'review queue': ({ output, walk }) => {
    const lines = output.trim().split('\n');
    walk.signOffs = [];
    walk.disputes = [];
    for (const line of lines) {
      const signOff = /^sign-off {2}(mem_\S+) /.exec(line);
      const dispute = /^dispute {3}(dsp_\S+) .* between (mem_\S+) and (mem_\S+) {2}by /.exec(line);
      expect(signOff ?? dispute, `a queue item: ${line}`).not.toBeNull();
      if (signOff) walk.signOffs.push(signOff[1]!);
      if (dispute) walk.disputes.push({ id: dispute[1]!, memoryIds: [dispute[2]!, dispute[3]!] });
    }
    // The walkthrough's tenant has both kinds waiting: the sample's HR record and the dispute opened below.
    expect(walk.signOffs.length, output).toBeGreaterThan(0);
    expect(walk.disputes.length, output).toBeGreaterThan(0);
  },
  'review show': ({ call, output }) => {
    const id = call.words[2]!;
    const shown = JSON.parse(output) as { id: string; content?: string; records?: { content?: string }[] };
    expect(shown.id).toBe(id);
    // A reviewer sees the content: of the record, or of both records of a dispute.
    if (id.startsWith('dsp_')) {
      expect(shown.records).toHaveLength(2);
      for (const record of shown.records!) expect(record.content).toEqual(expect.any(String));
    } else {
      expect(shown.content).toEqual(expect.any(String));
    }
  },
  'review decide': ({ call, output }) => {
    const status = call.words.includes('--approve') ? 'active' : 'rejected';
    expect(output.trim()).toBe(`${call.words[2]!}  ${status}`);
  },
  'review resolve': ({ call, output, walk }) => {
    const dispute = walk.disputes.find((d) => d.id === call.words[2]);
    expect(dispute, 'a dispute from the queue').toBeDefined();
    const statuses = Object.fromEntries(
      output
        .trim()
        .split('\n')
        .map((line) => line.split(/ {2}/)),
    );
    const keep = optionValue(call.words, '--keep');
    const reject = optionValue(call.words, '--reject');
    const [a, b] = dispute!.memoryIds as [string, string];
    const other = (id: string) => (id === a ? b : a);
    const expected = keep
      ? { [keep]: 'active', [other(keep)]: 'superseded' }
      : reject
        ? { [reject]: 'rejected', [other(reject)]: 'active' }
        : { [a]: 'active', [b]: 'active' };
    expect(statuses).toEqual(expected);
  },
};

/** The name of a `lethe` command among a call's words: `search`, or a group and its command (`token mint`). */
function commandName(words: string[]): string {
  const two = `${words[0]} ${words[1]}`;
  return two in CHECKS ? two : words[0]!;
}

function jsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);
}

/** A memory the DPO picks from the downloaded access package, by the attribute the placeholder names. */
function memoryInPackage(alternative: string): string {
  const attribute = /the (\S+) preference/.exec(alternative)?.[1];
  const pkg = JSON.parse(fs.readFileSync(path.join(workDir, 'ben-access.json'), 'utf8')) as {
    records: { id: string; type: string; status: string | null; content: string | null }[];
  };
  const sample = JSON.parse(fs.readFileSync(path.join(REPO_DIR, 'scripts/demo-data/sample-tenant.json'), 'utf8')) as {
    memories: { attribute?: string; content: string }[];
  };
  // The package holds Ben's records only: the sample's records with that attribute, as the package shows them.
  const contents = new Set(sample.memories.filter((m) => m.attribute === attribute).map((m) => m.content));
  const found = pkg.records.find((r) => r.type === 'memory' && r.status === 'active' && contents.has(r.content ?? ''));
  if (!found) throw new Error(`<${alternative}>: no active memory with that attribute in ben-access.json`);
  return found.id;
}

/** The value for one alternative of a `<placeholder>`, from what earlier commands printed. */
function placeholderValue(alternative: string, command: string, at: number, walk: Walk): string {
  const known = <T>(value: T | undefined, from: string): T => {
    if (value === undefined) throw new Error(`<${alternative}>: nothing printed it yet (it comes from ${from})`);
    return value;
  };
  if (/request|^era_/.test(alternative)) return known(walk.requestId, '`erasure request`');
  if (alternative.startsWith('acc_')) return known(walk.accessId, '`access file`');
  if (alternative.startsWith('rec_')) return known(walk.rectificationId, '`rectify file`');
  if (alternative.startsWith('rst_')) return known(walk.restrictionId, '`rights restrict`');
  if (alternative.includes('ben-access.json')) return memoryInPackage(alternative);
  if (alternative.startsWith('dsp_')) return known(walk.disputes[0]?.id, '`review queue`');
  if (alternative.startsWith('mem_')) {
    // After --keep or --reject of `review resolve`: a record of the dispute being resolved; elsewhere a sign-off.
    if (/ review resolve /.test(command) && /--(?:keep|reject)\s+$/.test(command.slice(0, at)))
      return known(walk.disputes[0]?.memoryIds[0], '`review queue`');
    return known(walk.signOffs[0], '`review queue`');
  }
  throw new Error(`<${alternative}>: this test does not know where that value comes from`);
}

/** The command once per alternative of its `<a | b>` placeholders, with every placeholder filled in. */
function withPlaceholders(command: string, walk: Walk): string[] {
  const placeholder = /<([^\s<>][^<>]*)>/.exec(command);
  if (!placeholder) return [command];
  const alternatives = placeholder[1]!.split('|').map((a) => a.trim());
  return alternatives.flatMap((alternative) => {
    const value = placeholderValue(alternative, command, placeholder.index, walk);
    const filled =
      command.slice(0, placeholder.index) + value + command.slice(placeholder.index + placeholder[0].length);
    return withPlaceholders(filled, walk);
  });
}

/** README text for this test: its tenant in place of the example one. */
function forThisTenant(command: string, tenant: string): string {
  return exampleTenant ? command.replaceAll(`--tenant ${exampleTenant}`, `--tenant ${tenant}`) : command;
}

let app: TestApp;
let workDir: string;
const walk: Walk = {
  tenant: uniqueTenant(),
  env: {},
  certificateIds: [],
  signOffs: [],
  disputes: [],
  disputeOpened: false,
};

/**
 * What the reviewer block needs and the sample tenant does not hold: a dispute. Another agent writes that Ben now
 * wants one invoice per order, against the sample's "single monthly invoice" (same subject and attribute,
 * overlapping valid time), through the API as any agent runtime would.
 */
async function openDispute(): Promise<void> {
  const written = await app.request({
    method: 'POST',
    url: `/v1/tenants/${walk.tenant}/batches`,
    token: await app.token(walk.tenant, ['agent'], 'agent-9'),
    payload: {
      events: [
        {
          source: 'phone',
          externalId: 'call-88',
          namespace: 'support',
          subjects: ['customer-ben'],
          occurredAt: '2026-10-20T10:00:00Z',
          content: 'Ben asked for one invoice per order from now on.',
        },
      ],
      memories: [
        {
          namespace: 'support',
          subjects: ['customer-ben'],
          kind: 'preference',
          attribute: 'invoicing',
          content: 'Ben wants one invoice per order.',
          validFrom: '2026-10-20T10:00:00Z',
          purpose: 'customer-support',
          sensitivity: 'internal',
          jurisdiction: 'DE',
          trustTier: 1,
          confidence: 0.9,
          provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-preference' },
        },
      ],
    },
  });
  expect(written.statusCode, written.body).toBe(201);
  expect(written.json<{ memories: { status: string }[] }>().memories[0]?.status).toBe('disputed');
}

/** Runs one command in bash as the README's reader would, in the session so far; afterwards its exports stay. */
async function runInSession(command: string): Promise<BashRun> {
  const envFile = path.join(workDir, '.session-env');
  fs.rmSync(envFile, { force: true });
  const script = [
    'set -o pipefail',
    command.replaceAll('npx lethe ', `node '${LETHE_BIN}' `),
    '__status=$?',
    `env -0 > '${envFile}'`,
    'exit $__status',
  ].join('\n');
  const run = await runProcess('bash', ['-c', script], { env: walk.env, cwd: workDir, timeoutMs: 400_000 });
  if (fs.existsSync(envFile)) {
    walk.env = Object.fromEntries(
      fs
        .readFileSync(envFile, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
    );
  }
  return run;
}

/** A scratch directory standing in for the checkout: its directories linked, its top-level files copied. */
function mirrorCheckout(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-readme-'));
  for (const entry of fs.readdirSync(REPO_DIR, { withFileTypes: true })) {
    if (entry.name === '.git') continue;
    const from = path.join(REPO_DIR, entry.name);
    // A directory the checkout itself links (a shared node_modules) is linked too.
    const directory = entry.isDirectory() || (entry.isSymbolicLink() && fs.statSync(from).isDirectory());
    if (directory) fs.symlinkSync(from, path.join(dir, entry.name), 'dir');
    else if (entry.isFile()) fs.copyFileSync(from, path.join(dir, entry.name));
  }
  return dir;
}

describe("the README's CLI walkthrough", () => {
  beforeAll(async () => {
    app = await startTestApp();
    const apiUrl = await listenOnRealPort(app);
    walk.env = cliEnvironment(app, apiUrl);
    workDir = mirrorCheckout();
  });
  afterAll(async () => {
    await app?.services.retentionScheduler.retire(walk.tenant);
    await app?.close();
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('is read from the README: commands that use the CLI, and an example tenant to replace', () => {
    const run = commands.filter((c) => !notRun(c));
    expect(run.length).toBeGreaterThan(0);
    expect(run.some((c) => c.text.includes('npx lethe '))).toBe(true);
    expect(exampleTenant).toBeDefined();
  });

  for (const command of commands) {
    if (notRun(command)) {
      // Not run here, but still checked: each part must be npm's own install or a script this package defines,
      // so a README line naming a script that was renamed or removed fails.
      it(`line ${command.line} names commands that exist (not run here: it installs, starts or runs the suite): ${command.text}`, () => {
        for (const part of splitOutside(command.text, '&&')) {
          const script = /^npm (?:run )?([\w:-]+)$/.exec(part)?.[1];
          expect(script, part).toBeDefined();
          if (script !== 'ci') expect(Object.keys(packageScripts), part).toContain(script);
        }
      });
      continue;
    }
    it(`line ${command.line} runs as written: ${command.text}`, { timeout: 400_000 }, async () => {
      if (!walk.disputeOpened && command.text.includes('npx lethe review ')) {
        await openDispute();
        walk.disputeOpened = true;
      }
      for (const concrete of withPlaceholders(forThisTenant(command.text, walk.tenant), walk)) {
        const run = await runInSession(concrete);
        expect(run.code, `${concrete}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
        for (const segment of splitOutside(concrete, '&&')) {
          const call = letheCallOf(segment);
          if (!call) throw new Error(`not a \`npx lethe\` command, and this test has no check for it: ${segment}`);
          const name = commandName(call.words);
          const check = CHECKS[name];
          if (!check) throw new Error(`\`lethe ${name}\`: this test has no check of what it prints yet`);
          const output =
            call.sink.kind === 'env'
              ? (walk.env[call.sink.name] ?? '')
              : call.sink.kind === 'file'
                ? fs.readFileSync(path.join(workDir, call.sink.path), 'utf8')
                : run.stdout;
          check({ call, output, walk });
        }
      }
    });
  }
});
