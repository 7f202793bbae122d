/**
 * `lethe keys` with the KEKs in AWS KMS (the stack's emulator of its API): an operator makes the first epoch, lists
 * the epochs, and is refused a second first epoch; asked for the local keyring without --file, the usage error names
 * the option.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadStackConfig } from '../../../stack/stack-config.js';
import { runLethe, type ProcessRun } from '../../support/cli-process.js';
import { ExitCode } from '../../../app/cli/exit-codes.js';

const described = (run: ProcessRun) => `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;

describe('lethe keys, with the KEKs in AWS KMS', () => {
  const prefix = `alias/lethe-cli-${randomUUID().slice(0, 8)}`;
  const env = {
    ...process.env,
    LETHE_ENV: 'test',
    LETHE_KMS: 'aws-kms',
    LETHE_AWS_KMS_REGION: 'eu-west-1',
    LETHE_AWS_KMS_ENDPOINT: loadStackConfig().kms.url,
    LETHE_AWS_KMS_ALIAS_PREFIX: prefix,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };

  it('makes the first epoch once, lists it, and refuses a second first epoch', async () => {
    const init = await runLethe(['keys', 'init'], { env });
    expect(init.code, described(init)).toBe(ExitCode.ok);
    expect(init.stdout.trim()).toBe(`${prefix}/epoch-1`);
    const again = await runLethe(['keys', 'init'], { env });
    expect(again.code, described(again)).toBe(ExitCode.refused);
    expect(again.stderr).toContain(`under ${prefix} already`);
    const listed = await runLethe(['--json', 'keys', 'epochs'], { env });
    expect(listed.code, described(listed)).toBe(ExitCode.ok);
    const epochs = listed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { epoch: number; destroyedAt: string | null });
    expect(epochs).toEqual([expect.objectContaining({ epoch: 1, destroyedAt: null })]);
  });

  it('names --file when the keyring is local and no file is given', async () => {
    const run = await runLethe(['keys', 'init'], { env: { ...env, LETHE_KMS: 'local-file' } });
    expect(run.code, described(run)).toBe(ExitCode.usage);
    expect(run.stderr).toMatch(/--file: required unless LETHE_KMS is aws-kms/);
  });
});
