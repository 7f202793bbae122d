import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { registerAuditCommands } from '../../../app/cli/commands/audit.command.js';
import { CliError, ExitCode } from '../../../app/cli/exit-codes.js';
import type { CliContext } from '../../../app/cli/context.js';
import { buildChain, seeds } from './chain-fixtures.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lethe-audit-cli-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  process.exitCode = undefined;
  vi.restoreAllMocks();
});

const chain = buildChain('t-audit', seeds(6));
const write = (name: string, entries: unknown[]) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
  return p;
};

async function lethe(...args: string[]): Promise<{ out: string; exitCode: number }> {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const program = new Command('lethe').option('--json').exitOverride();
  registerAuditCommands(program, (): CliContext => {
    throw new CliError('no API in this test', ExitCode.unavailable);
  });
  await program.parseAsync(args, { from: 'user' });
  return { out, exitCode: Number(process.exitCode ?? 0) };
}

describe('lethe audit verify with a known head', () => {
  it('passes a whole export whose last entry has the expected hash', async () => {
    const result = await lethe('audit', 'verify', write('whole.jsonl', chain), '--head', chain.at(-1)!.hash);
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.out).toContain('6 entries');
  });

  it('fails an export cut short at the end, which verifies without --head', async () => {
    const cut = write('cut.jsonl', chain.slice(0, 4));
    expect((await lethe('audit', 'verify', cut)).exitCode).toBe(0);
    const withHead = await lethe('audit', 'verify', cut, '--head', chain.at(-1)!.hash);
    expect(withHead.exitCode).toBe(ExitCode.verificationFailed);
    expect(withHead.out).toContain('FAILED');
  });

  it('verifies a later range from the hash of the entry before it', async () => {
    const range = write('range.jsonl', chain.slice(3));
    expect((await lethe('audit', 'verify', range, '--from', '4', '--prev', chain[2]!.hash)).exitCode).toBe(0);
    expect((await lethe('audit', 'verify', range, '--from', '4', '--prev', chain[1]!.hash)).exitCode).toBe(
      ExitCode.verificationFailed,
    );
  });

  it('refuses a malformed hash as a usage error naming the flag', async () => {
    await expect(lethe('audit', 'verify', write('x.jsonl', chain), '--head', 'abc')).rejects.toThrow(/--head/);
  });
});
