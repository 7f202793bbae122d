import { decideFindings, openFindings, type FindingsDecision } from '../../src/governance/erasure/copy-findings.js';
import { sha256Hex } from '../../src/shared/sha256.js';
import type { ErasureActivityDeps, ErasureContext, ErasureRef } from './erasure-context.js';

/** The findings' ids in one short value: the request and the certificate list them, the audit entry pins them. */
const idsDigest = (ids: readonly string[]) => sha256Hex([...ids].sort().join('\n'));

/**
 * Copies of erased content found outside the closure: the request waits in `needs-dpo` (audited, the DPO e-mailed)
 * until the DPO extends it to the copies or certifies with them stated. Ids and counts only.
 */
export function createFindingsActivities(deps: ErasureActivityDeps, ctx: ErasureContext) {
  return {
    async raiseFindings(ref: ErasureRef): Promise<{ open: number }> {
      const req = await ctx.request(ref);
      const ids = openFindings(req.findings).map((f) => f.id);
      const open = ids.length;
      await deps.requests.setState(ref.tenant, ref.requestId, 'needs-dpo', `${open} copies found outside the closure`);
      await deps.audit.append({
        tenant: ref.tenant,
        actor: `erasure:${ref.requestId}`,
        action: 'erasure.copies-found',
        target: ref.requestId,
        outcome: 'ok',
        details: { open, idsSha256: idsDigest(ids) },
        idempotencyKey: `erasure:${ref.requestId}:copies:${idsDigest(ids)}`,
      });
      await deps.notifier.send({
        to: deps.dpoEmail,
        subject: `Lethe: erasure ${ref.requestId} — copies found`,
        text:
          `Erasure request ${ref.requestId} found ${open} records outside its closure that carry erased content.\n` +
          `Tenant: ${ref.tenant}. Decide in the console, or: lethe erasure findings ${ref.requestId} --extend|--certify --reason "…"`,
      });
      return { open };
    },

    /**
     * Applies the DPO's decision to the open findings. `extend`: the copies join the request's located records, so
     * the next round fences, closes over, checks holds on and erases them like the rest. `certify`: they stay, and
     * the certificate names them.
     *
     * Recovers forward: the audit entry is keyed on the findings it decides and written first, and marking them
     * decided is the last write. An attempt that dies anywhere before that mark is redone whole under the same key;
     * a retry that finds nothing open (the mark went through) has nothing left to do and writes nothing.
     */
    async resolveFindings(
      ref: ErasureRef & { decision: FindingsDecision; reasonHash: string; decidedBy: string },
    ): Promise<{ extended: number; stated: number }> {
      const req = await ctx.request(ref);
      const open = openFindings(req.findings);
      if (open.length > 0) {
        const openIds = open.map((f) => f.id);
        await deps.audit.append({
          tenant: ref.tenant,
          actor: ref.decidedBy,
          action: 'erasure.copies-decided',
          target: ref.requestId,
          outcome: 'ok',
          details: {
            decision: ref.decision,
            decided: open.length,
            idsSha256: idsDigest(openIds),
            reasonHash: ref.reasonHash,
          },
          idempotencyKey: `erasure:${ref.requestId}:copies-decided:${idsDigest(openIds)}`,
        });
        if (ref.decision === 'extend') {
          const located = (await deps.sets.get(ref.tenant, ref.requestId, 'located')).ids;
          await deps.sets.put(ref.tenant, ref.requestId, 'located', [...new Set([...located, ...openIds])]);
        }
        await deps.requests.update(ref.tenant, ref.requestId, {
          findings: decideFindings(req.findings ?? [], ref.decision),
        });
      }
      const count = open.length;
      return ref.decision === 'extend' ? { extended: count, stated: 0 } : { extended: 0, stated: count };
    },
  };
}
