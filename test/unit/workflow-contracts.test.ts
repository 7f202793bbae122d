/**
 * Every workflow a client starts is started through its contract: the contract's name is the type name the worker
 * registers (an export of `workflows/index.ts`), and its input and result are the workflow function's. The type
 * check below fails `npm run check` when a workflow's signature drifts from its contract; the test fails when a
 * contract names a workflow the worker does not register.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type * as Workflows from '../../workflows/index.js';
import { accessRequestWorkflow } from '../../src/temporal/contracts/access-request.contract.js';
import { consolidationWorkflow } from '../../src/temporal/contracts/consolidation.contract.js';
import { erasureRequestWorkflow } from '../../src/temporal/contracts/erasure.contract.js';
import { ingestBatchWorkflow } from '../../src/temporal/contracts/ingest-batch.contract.js';
import { kekRotationWorkflow } from '../../src/temporal/contracts/kek-rotation.contract.js';
import { rectificationRequestWorkflow } from '../../src/temporal/contracts/rectification.contract.js';
import { reembedTenantWorkflow } from '../../src/temporal/contracts/reembed.contract.js';
import { retentionSweepWorkflow } from '../../src/temporal/contracts/retention-sweep.contract.js';
import type { WorkflowContract, WorkflowFunction } from '../../src/temporal/contracts/workflow-contract.js';

const contracts = {
  accessRequestWorkflow,
  consolidationWorkflow,
  erasureRequestWorkflow,
  ingestBatchWorkflow,
  kekRotationWorkflow,
  rectificationRequestWorkflow,
  reembedTenantWorkflow,
  retentionSweepWorkflow,
};

type Registered = typeof Workflows;
/** `true` only when the contract names a registered workflow whose function fits the contract's input and result. */
type Fits<C> =
  C extends WorkflowContract<infer Name, infer _Input, infer _Result>
    ? Name extends keyof Registered
      ? Registered[Name] extends WorkflowFunction<C>
        ? true
        : false
      : false
    : false;
const fits: { [K in keyof typeof contracts]: Fits<(typeof contracts)[K]> } = {
  accessRequestWorkflow: true,
  consolidationWorkflow: true,
  erasureRequestWorkflow: true,
  ingestBatchWorkflow: true,
  kekRotationWorkflow: true,
  rectificationRequestWorkflow: true,
  reembedTenantWorkflow: true,
  retentionSweepWorkflow: true,
};
// Held by the type checker (`npm run check`), not at run time: a `false` above does not compile.
void fits;

describe('workflow contracts', () => {
  const index = fs.readFileSync(new URL('../../workflows/index.ts', import.meta.url), 'utf8');
  const registered = new Set([...index.matchAll(/export \{ (\w+) \}/g)].map((m) => m[1]));

  it('name only workflows the worker registers, each once', () => {
    const names = Object.values(contracts).map((c) => c.name);
    expect(names.filter((n) => !registered.has(n))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
  });

  it('leave no gateway, schedule or route starting a workflow or sending it a message by a bare string', () => {
    const offenders: string[] = [];
    for (const dir of ['src/temporal', 'app']) {
      for (const file of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
        if (!file.endsWith('.ts')) continue;
        const text = fs.readFileSync(`${dir}/${file}`, 'utf8');
        const bare =
          /workflow\.(start|execute|signalWithStart)\(\s*'|\.(executeUpdate|startUpdate|signal|query)(<[^>]*>)?\(\s*'|workflowType:\s*'/;
        if (bare.test(text)) offenders.push(`${dir}/${file}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
