/**
 * `lethe rights`: a DPO restricts, objects, lists, shows and lifts through the real process against an API on a
 * real port; usage errors are named with exit code 2 before anything is sent, refusals keep the API's codes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueTenant, type TestApp } from '../../support/app.js';
import { cliEnvironment, listenOnRealPort, runLethe, type ProcessRun } from '../../support/cli-process.js';
import { ExitCode } from '../../../app/cli/exit-codes.js';
import { Collections } from '../../../src/substrate/mongo/collections.js';
import type { Role } from '../../../src/governance/auth/principal.js';

describe('lethe rights', () => {
  let app: TestApp;
  let env: NodeJS.ProcessEnv;
  const tenant = uniqueTenant();
  const as = async (roles: Role[], args: string[]) =>
    runLethe(args, { env: { ...env, LETHE_TOKEN: await app.token(tenant, roles, `${roles[0]}-1`) } });
  const described = (run: ProcessRun) => `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
  const stored = () => app.runtime.db.collection(Collections.restrictions).countDocuments({ tenant });

  beforeAll(async () => {
    app = await startTestApp();
    env = cliEnvironment(app, await listenOnRealPort(app));
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  it('a DPO restricts, objects, lists, shows and lifts, each answer one JSON document', async () => {
    const key = `rk-${randomUUID()}`;
    const restrict = [
      '--json',
      'rights',
      'restrict',
      '--subject',
      'customer-ana',
      '--ground',
      'art18-1a',
      '--reason',
      'contests accuracy',
      '--key',
      key,
    ];
    const restricted = await as(['dpo'], restrict);
    expect(restricted.code, described(restricted)).toBe(ExitCode.ok);
    const r = JSON.parse(restricted.stdout) as { id: string; kind: string; active: boolean };
    expect(r).toMatchObject({ kind: 'restriction', active: true });
    expect(restricted.stdout).not.toContain('customer-ana');
    // The same key again: the same request, nothing new stored.
    const again = await as(['dpo'], restrict);
    expect((JSON.parse(again.stdout) as { id: string }).id).toBe(r.id);

    const objected = await as(
      ['dpo'],
      [
        '--json',
        'rights',
        'object',
        '--subject',
        'customer-ben',
        '--purposes',
        'personalisation',
        'marketing',
        '--ground',
        'art21-2',
        '--reason',
        'no offers',
        '--key',
        `rk-${randomUUID()}`,
      ],
    );
    expect(objected.code, described(objected)).toBe(ExitCode.ok);
    expect(JSON.parse(objected.stdout)).toMatchObject({
      kind: 'objection',
      purposes: ['marketing', 'personalisation'],
    });
    expect(await stored()).toBe(2);

    const listed = await as(['auditor'], ['--json', 'rights', 'list', '--limit', '1']);
    expect(listed.code, described(listed)).toBe(ExitCode.ok);
    const page = JSON.parse(listed.stdout) as { items: { id: string }[]; nextCursor: string | null };
    expect(page.items).toHaveLength(1);
    expect(page.nextCursor).toEqual(expect.any(String));
    const rest = await as(['auditor'], ['--json', 'rights', 'list', '--cursor', page.nextCursor!]);
    expect((JSON.parse(rest.stdout) as { items: { id: string }[] }).items.map((i) => i.id)).toEqual([r.id]);

    const text = await as(['dpo'], ['rights', 'list']);
    expect(text.stdout).toContain('objection to marketing, personalisation');

    const lifted = await as(['dpo'], ['--json', 'rights', 'lift', r.id, '--reason', 'corrected']);
    expect(lifted.code, described(lifted)).toBe(ExitCode.ok);
    expect(JSON.parse(lifted.stdout)).toMatchObject({ id: r.id, active: false, liftedBy: 'dpo-1' });
    const shown = await as(['legal'], ['--json', 'rights', 'show', r.id]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: r.id, active: false });
    const twice = await as(['dpo'], ['--json', 'rights', 'lift', r.id, '--reason', 'again']);
    expect(twice.code).toBe(ExitCode.refused);
    expect(JSON.parse(twice.stderr)).toEqual({ error: { message: expect.any(String), exitCode: ExitCode.refused } });
  });

  it('names a usage error with exit code 2 and a refusal with the API’s code, storing nothing', async () => {
    const before = await stored();
    const noKey = await as(['dpo'], ['rights', 'restrict', '--subject', 's', '--ground', 'art18-1a', '--reason', 'r']);
    expect(noKey.code, described(noKey)).toBe(ExitCode.usage);
    expect(noKey.stderr).toContain('--key');
    const wrongGround = await as(
      ['dpo'],
      ['--json', 'rights', 'restrict', '--subject', 's', '--ground', 'art21-2', '--reason', 'r', '--key', 'k1'],
    );
    expect(wrongGround.code, described(wrongGround)).toBe(ExitCode.usage);
    expect(JSON.parse(wrongGround.stderr)).toMatchObject({
      error: { message: expect.stringContaining('legalGround') },
    });
    const badLimit = await as(['dpo'], ['rights', 'list', '--limit', '0']);
    expect(badLimit.code).toBe(ExitCode.usage);
    expect(badLimit.stderr).toContain('--limit');
    const agent = await as(
      ['agent'],
      ['rights', 'restrict', '--subject', 's', '--ground', 'art18-1a', '--reason', 'r', '--key', 'k2'],
    );
    expect(agent.code).toBe(ExitCode.denied);
    const missing = await as(['dpo'], ['rights', 'show', 'rst_000000000000000000000000']);
    expect(missing.code).toBe(ExitCode.notFound);
    expect(await stored()).toBe(before);
  });
});
