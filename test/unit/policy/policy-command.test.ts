import { Command } from 'commander';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { registerPolicyCommands } from '../../../app/cli/commands/policy.command.js';
import { CliError, ExitCode } from '../../../app/cli/exit-codes.js';
import { POLICIES_DIR } from '../../../src/governance/policy/policy-set.js';
import { policyDir, policyWith, removePolicyDirs, rule } from './policy-fixtures.js';

/** Runs `lethe [--json] policy check --dir <dir>` in process; returns its output and exit code. */
async function policyCheck(dir: string, json = false): Promise<{ out: string; exitCode: number }> {
  const program = new Command('lethe').option('--json').exitOverride();
  registerPolicyCommands(program);
  let out = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await program.parseAsync([...(json ? ['--json'] : []), 'policy', 'check', '--dir', dir], { from: 'user' });
  } finally {
    write.mockRestore();
  }
  const exitCode = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { out, exitCode };
}

afterAll(removePolicyDirs);

afterEach(() => {
  process.exitCode = undefined;
});

const sound = policyWith([rule('dpo', { some: [{ var: 'roles' }, { '===': [{ var: '' }, 'dpo'] }] })], {
  variables: { roles: 'string[]' },
});
const soundTests = [
  { name: 'a DPO is allowed', facts: { roles: ['dpo'] }, expect: 'allow' },
  { name: 'an agent is denied', facts: { roles: ['agent'] }, expect: 'deny' },
];

describe('lethe policy check', () => {
  it("exits 0 on the repository's policies and says how many tests passed", async () => {
    const { out, exitCode } = await policyCheck(POLICIES_DIR);
    expect(exitCode).toBe(ExitCode.ok);
    expect(out).toMatch(/^ok: \d+ policies, \d+ tests passed, 0 failed, 0 warnings\n$/);
  });

  it('exits 5 (refused) on a dead rule, naming the file and the rule', async () => {
    const dir = policyDir({
      'sample.json': { ...sound, rules: [...sound.rules, rule('never', { '==': [1, 2] })] },
      'tests/sample.tests.json': soundTests,
    });
    const { out, exitCode } = await policyCheck(dir);
    expect(exitCode).toBe(ExitCode.refused);
    expect(out).toContain(`${dir}/sample.json: error [dead-rule] rule "never" can never fire`);
    expect(out).toMatch(/^FAILED: 1 error, 0 warnings/m);
  });

  it('exits 5 on an unknown variable and on a failing test', async () => {
    const dir = policyDir({
      'sample.json': { ...sound, rules: [rule('typo', { '===': [{ var: 'role' }, 'dpo'] })] },
      'tests/sample.tests.json': soundTests,
    });
    const { out, exitCode } = await policyCheck(dir);
    expect(exitCode).toBe(ExitCode.refused);
    expect(out).toContain('[unknown-variable] rule "typo": reads "role"');
    expect(out).toContain('[test-failed] test "a DPO is allowed": expected allow, got deny by rule "default"');
  });

  it('exits 2 (usage) on a file that is not JSON, naming it', async () => {
    const dir = policyDir({ 'broken.json': '{ "id": ', 'sample.json': sound, 'tests/sample.tests.json': soundTests });
    const { out, exitCode } = await policyCheck(dir);
    expect(exitCode).toBe(ExitCode.usage);
    expect(out).toContain(`${dir}/broken.json: error [invalid-json] ${dir}/broken.json is not valid JSON`);
  });

  it('exits 2 when the directory does not exist', async () => {
    await expect(policyCheck('/nonexistent/policies')).rejects.toEqual(
      new CliError('--dir: no such directory /nonexistent/policies', ExitCode.usage),
    );
  });

  it('prints the whole report as JSON with --json', async () => {
    const dir = policyDir({ 'sample.json': sound, 'tests/sample.tests.json': soundTests });
    const { out, exitCode } = await policyCheck(dir, true);
    expect(exitCode).toBe(ExitCode.ok);
    expect(JSON.parse(out)).toEqual({ dir, policies: 1, tests: { passed: 2, failed: 0 }, findings: [] });
  });
});
