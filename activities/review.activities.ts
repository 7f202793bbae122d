import { ApplicationFailure } from '@temporalio/activity';
import type { AuditLog } from '../src/governance/audit/audit-log.port.js';
import type { Notifier } from '../src/governance/notifications/notifier.js';
import type { MemoryStore } from '../src/substrate/memories/memory-store.js';
import type { SearchIndex } from '../src/substrate/search/search-index.port.js';
import { ErrorType } from '../src/shared/errors.js';
import type { ErasureFenceStore } from '../src/governance/erasure/erasure-fence-store.js';

export interface ReviewActivityDeps {
  memories: MemoryStore;
  index: SearchIndex;
  /** Absent in tests of the workflow alone: then no erasure can be running. */
  fences?: ErasureFenceStore;
  audit: AuditLog;
  notifier: Notifier;
  reviewersEmail: string;
  escalationEmail: string;
}

/** Activities of the sign-off workflow: apply a decision (one audited transition), send notices (ids only). */
export function createReviewActivities(deps: ReviewActivityDeps) {
  return {
    async applyReviewDecision(input: {
      tenant: string;
      memoryId: string;
      reviewer: string;
      decision: 'approve' | 'reject';
      reasonHash: string;
      byDefault: boolean;
    }): Promise<'active' | 'rejected'> {
      const to = input.decision === 'approve' ? 'active' : 'rejected';
      const record = await deps.memories.get(input.tenant, input.memoryId);
      if (!record) throw ApplicationFailure.nonRetryable(`memory ${input.memoryId} not found`, ErrorType.NotFound);
      // A running erasure owns the record: the decision loses to it, whoever decides (a reviewer or the default).
      const fenced = await deps.fences?.firstFenced(input.tenant, [
        { kind: 'record', value: input.memoryId },
        ...record.subjects.map((subject) => ({ kind: 'subject' as const, value: subject })),
      ]);
      if (fenced && record.status === 'candidate') {
        throw ApplicationFailure.create({
          type: ErrorType.Conflict,
          message: `review: memory ${input.memoryId} is being erased (request ${fenced.requestId}); no decision was made`,
          details: ['id'],
          nonRetryable: true,
        });
      }
      // Idempotent on retry: a record already moved to the target counts as done.
      if (record.status !== to) {
        const moved = await deps.memories.transition(
          input.tenant,
          input.memoryId,
          'candidate',
          to,
          `review:${input.reviewer}`,
        );
        if (!moved) {
          const now = await deps.memories.get(input.tenant, input.memoryId);
          if (now?.status !== to) {
            throw ApplicationFailure.nonRetryable(
              `memory ${input.memoryId} is ${now?.status ?? 'gone'}, not candidate`,
              ErrorType.IllegalTransition,
            );
          }
        }
      }
      await deps.index.updateStatus(input.tenant, [input.memoryId], to, { refresh: 'wait_for' });
      await deps.audit.append({
        tenant: input.tenant,
        actor: input.reviewer,
        action: `memory.${to === 'active' ? 'approved' : 'rejected'}`,
        target: input.memoryId,
        outcome: 'ok',
        details: { from: 'candidate', to, reasonHash: input.reasonHash, byDefault: input.byDefault },
        idempotencyKey: `review:${input.memoryId}:decision`,
      });
      return to;
    },

    async sendReviewNotice(input: {
      tenant: string;
      memoryId: string;
      kind: 'reminder' | 'escalation' | 'defaulted';
    }): Promise<void> {
      const text = {
        reminder: `Memory ${input.memoryId} (tenant ${input.tenant}) is waiting for your sign-off.`,
        escalation: `Memory ${input.memoryId} (tenant ${input.tenant}) passed its review deadline without a decision.`,
        defaulted: `Memory ${input.memoryId} (tenant ${input.tenant}) reached its final review deadline; the policy default was applied.`,
      }[input.kind];
      await deps.notifier.send({
        to: input.kind === 'reminder' ? deps.reviewersEmail : deps.escalationEmail,
        subject: `Lethe: review ${input.kind} for ${input.memoryId}`,
        text,
      });
    },
  };
}
