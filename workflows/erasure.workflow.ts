import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { createErasureActivities } from '../activities/erasure.activities.js';
import type { createDisputeActivities } from '../activities/dispute.activities.js';
import { disputeVoidedSignal } from '../src/temporal/contracts/dispute-review.contract.js';
import { disputeWorkflowId } from '../src/shared/workflow-ids.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import { SearchAttributes } from '../src/shared/search-attributes.js';
import { ErrorType } from '../src/shared/errors.js';
import { refusal } from './refusal.js';
import {
  erasurePhaseQuery,
  extendDeadlineUpdate,
  holdReleasedSignal,
  operatorRetrySignal,
  operatorRetryUpdate,
  resolveFindingsUpdate,
  type ErasureInput,
  type ErasureOutcome,
  type ErasurePhase,
} from '../src/temporal/contracts/erasure.contract.js';
import { isErasureFinished } from '../src/shared/erasure-finished.js';

type Activities = ReturnType<typeof createErasureActivities>;
const quick = proxyActivities<Activities>(RetryProfiles.storeWrite);
/** Steps whose time grows with the closure (closure, tombstone, purge, compact, verify): they heartbeat. */
const long = proxyActivities<Activities>(RetryProfiles.longPurge);
const notify = proxyActivities<Activities>(RetryProfiles.notify);
const disputes = proxyActivities<ReturnType<typeof createDisputeActivities>>(RetryProfiles.storeWrite);

const DAY = 24 * 60 * 60 * 1000;
/**
 * Soft-delete retention leases advance on a sync (30 s by default, 1 s in tests): wait durably between expunge
 * attempts, 1 s for the first three and then doubling up to 10 s, about two minutes in all. A short first wait lets a small index or a
 * quick sync finish in seconds rather than a fixed 10.
 */
const EXPUNGE_WAITS_MS = [1000, 1000, 1000, 2000, 2000, 4000, 8000, ...Array<number>(10).fill(10_000)];
/**
 * Waits before each new look when a verification finds residues: about two minutes in all, past a late index
 * write's own withdrawal (its expunge waits up to a minute for the soft-delete lease).
 */
const VERIFY_WAITS_MS = [2000, 4000, 8000, 15_000, 30_000, 60_000];
const MAX_EXTENSION_MONTHS = 2;
/** How long a parked request waits before its failed escalation is tried again. */
const ESCALATION_AGAIN_MS = 5 * 60_000;
/** Failures raised by the workflow itself that an operator resolves (then signals a retry). */
const OPERATOR_FAILURES = ['ExpungeIncomplete', 'VerificationFailed'];
/** Rounds in a row that find records written past the fence before an operator is asked to look. */
const MAX_RACED_ROUNDS = 5;

function addMonths(iso: string, months: number): string {
  const d = new Date(iso);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.toISOString();
}

/**
 * One erasure request through the six steps of the deletion closure. Recovers forward: a step that keeps
 * failing parks the request in needs-operator (operator e-mailed, runbook named) until an operator signals
 * a retry; legal holds leave it partial until released; the GDPR clock warns the DPO before and after the
 * due date.
 */
export async function erasureRequest(input: ErasureInput): Promise<ErasureOutcome> {
  const ref = { tenant: input.tenant, requestId: input.requestId };
  let phase: ErasurePhase = 'running';
  let currentStep = 'locate';
  let dueAt = addMonths(input.receivedAt, 1);
  let extendedMonths = 0;
  let deadlineChanged = false;
  /** An extension the clock keeps that the stored request does not show yet. */
  let extensionUnrecorded = false;
  let retryRequested = false;
  let holdsReleased = 0;
  let findingsDecision: { decision: 'extend' | 'certify'; reasonHash: string; decidedBy: string } | null = null;
  const certificateIds: string[] = [];

  setHandler(erasurePhaseQuery, () => ({ phase, dueAt, step: currentStep }));
  setHandler(operatorRetrySignal, () => void (retryRequested = true));
  setHandler(
    operatorRetryUpdate,
    () => {
      retryRequested = true;
      return { state: 'running' as const };
    },
    {
      validator: () => {
        if (isErasureFinished(phase)) {
          throw refusal(ErrorType.Conflict, 'erasure request: the request already finished', 'id');
        }
        if (phase !== 'needs-operator')
          throw refusal(ErrorType.Conflict, `erasure request: is ${phase}, not needs-operator`, 'id');
        if (retryRequested)
          throw refusal(ErrorType.Conflict, 'erasure request: another operator already retried it', 'id');
      },
    },
  );
  setHandler(holdReleasedSignal, () => void holdsReleased++);
  setHandler(
    resolveFindingsUpdate,
    (decision) => {
      findingsDecision = decision;
      return { state: 'running' as const };
    },
    {
      validator: ({ decision, reasonHash, decidedBy }) => {
        if (phase !== 'needs-dpo')
          throw refusal(ErrorType.Conflict, `erasure request: is ${phase}, not needs-dpo`, 'id');
        // Set in the handler's first synchronous step: a second DPO deciding at once is refused here.
        if (findingsDecision) throw refusal(ErrorType.Conflict, 'erasure request: another DPO already decided', 'id');
        if (decision !== 'extend' && decision !== 'certify')
          throw refusal(ErrorType.Validation, 'decision: extend or certify', 'decision');
        if (!reasonHash) throw refusal(ErrorType.Validation, 'reason: required', 'reason');
        if (!decidedBy) throw refusal(ErrorType.Validation, 'decidedBy: required', 'decidedBy');
      },
    },
  );
  setHandler(
    extendDeadlineUpdate,
    async ({ months, reasonHash }) => {
      extensionUnrecorded = true;
      extendedMonths += months;
      dueAt = addMonths(dueAt, months);
      deadlineChanged = true;
      const extension = { ...ref, months, reasonHash, dueAt, extensionMonths: extendedMonths };
      try {
        await quick.recordExtension(extension);
      } catch (error) {
        // The clock has moved. A store down past the activity's retries must not answer the DPO with a failure for
        // an extension the clock keeps (one sent again would move it twice): the recording is tried again until it
        // lands, and the answer stands. Runs whose update failed here replay as they ran.
        if (error instanceof ActivityFailure && patched('extension-recorded-until-it-lands')) {
          void recordExtensionWhenBack(extension);
          return { dueAt: extension.dueAt };
        }
        extensionUnrecorded = false;
        throw error;
      }
      extensionUnrecorded = false;
      await tellDpo({ kind: 'extended', dueAt: extension.dueAt });
      return { dueAt: extension.dueAt };
    },
    {
      validator: ({ months, reasonHash }) => {
        if (!Number.isInteger(months) || months < 1)
          throw refusal(ErrorType.Validation, 'months: a whole number of at least 1', 'months');
        // `extendedMonths` grows in the handler's first synchronous step, so concurrent extensions see each other.
        if (extendedMonths + months > MAX_EXTENSION_MONTHS) {
          throw refusal(ErrorType.Conflict, 'months: at most two months of extension in total', 'months');
        }
        if (!reasonHash) throw refusal(ErrorType.Validation, 'reason: required', 'reason');
        if (isErasureFinished(phase)) {
          throw refusal(ErrorType.Conflict, 'erasure request: the request already finished', 'id');
        }
        // Set in the handler's first synchronous step too: each extension is recorded with the totals it made.
        if (extensionUnrecorded)
          throw refusal(
            ErrorType.Conflict,
            'months: an extension is still being recorded; try again shortly',
            'months',
          );
      },
    },
  );

  const setPhase = async (next: ErasurePhase) => {
    phase = next;
    upsertSearchAttributes([{ key: SearchAttributes.state, value: next }]);
  };

  /** Parks the request in needs-operator (audited, operator e-mailed with the runbook) until an operator retries. */
  async function parkForOperator(step: string, type: string): Promise<void> {
    const before = phase;
    // Cleared before the phase says needs-operator: a retry accepted from then on must not be forgotten.
    retryRequested = false;
    await setPhase('needs-operator');
    // The escalation stores the state the DPO's list shows, audits it and e-mails the operator. A store or mail
    // server still down after its retries must not end the run (the request would read `running` for ever): it is
    // tried again every few minutes until it lands, or until an operator retries anyway (the retry goes by the
    // phase, which already says needs-operator).
    while (!retryRequested) {
      try {
        await notify.escalateToOperator({ ...ref, step, errorType: type });
        break;
      } catch (error) {
        if (!(error instanceof ActivityFailure)) throw error;
        await condition(() => retryRequested, ESCALATION_AGAIN_MS);
      }
    }
    await condition(() => retryRequested);
    await setPhase(before === 'needs-operator' ? 'running' : before);
    await guarded(step, () => quick.setErasureState({ ...ref, state: 'running' }));
  }

  /** An extension's recording, tried again every few minutes until it lands; the DPO is e-mailed once it has. */
  async function recordExtensionWhenBack(extension: Parameters<Activities['recordExtension']>[0]): Promise<void> {
    for (;;) {
      await sleep(ESCALATION_AGAIN_MS);
      try {
        await quick.recordExtension(extension);
        break;
      } catch (error) {
        if (!(error instanceof ActivityFailure)) throw error;
      }
    }
    extensionUnrecorded = false;
    await tellDpo({ kind: 'extended', dueAt: extension.dueAt });
  }

  /**
   * The DPO e-mailed. A mail server down past the notification's retries must not end the run: the failed activity
   * stays in the history, and the request's state (which the DPO's list shows) is stored apart from the mail.
   */
  async function tellDpo(message: Omit<Parameters<Activities['notifyDpo']>[0], keyof typeof ref>): Promise<void> {
    try {
      await notify.notifyDpo({ ...ref, ...message });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
    }
  }

  /** Runs a step; when its retries are exhausted, parks in needs-operator until an operator asks to retry. */
  async function guarded<T>(name: string, run: () => Promise<T>): Promise<T> {
    currentStep = name;
    for (;;) {
      try {
        return await run();
      } catch (error) {
        let type: string;
        if (error instanceof ActivityFailure) {
          const cause = error.cause;
          type =
            cause instanceof ApplicationFailure
              ? (cause.type ?? 'ApplicationFailure')
              : (cause?.name ?? 'ActivityFailure');
          // A permanent refusal (not found, not authorised) is not an operator's to retry.
          if (cause instanceof ApplicationFailure && cause.nonRetryable) throw error;
        } else if (error instanceof ApplicationFailure && OPERATOR_FAILURES.includes(error.type ?? '')) {
          type = error.type!;
        } else {
          throw error;
        }
        await parkForOperator(name, type);
      }
    }
  }

  void watchDeadline();

  await guarded('locate', () => quick.locateTargets(ref));

  let erased = 0;
  let round = 0;
  let racedRounds = 0;
  for (;;) {
    round++;
    // Recomputed every round (a released hold, a write that raced the fence) until it stops growing.
    await guarded('closure', () => long.computeClosure(ref));
    const authorised = await guarded('authorise', () => quick.authoriseAndCheckHolds(ref));
    if (!authorised.allowed) {
      await setPhase('rejected');
      await tellDpo({ kind: 'rejected' });
      return { state: 'rejected', certificateIds, erased: 0, held: 0 };
    }
    if (authorised.toErase > 0) {
      await guarded('tombstone', () => long.markDeletedAndTombstone({ ...ref, round }));
      // Requests started before disputes existed replay without this step.
      if (patched('close-disputes-of-erased')) await guarded('tombstone', () => closeDisputes());
      await guarded('purge', () => long.purgeRecords({ ...ref, round }));
      await guarded('expunge', () => expungeUntilClean());
      await guarded('compact', () => long.compactStores(ref));
      erased += authorised.toErase;
    }
    const verdict = await guarded('verify', () => verifyUntilSettled());
    if (verdict.relocated > 0) {
      // Records written about the subject or derived from its records raced the fence: erase them too, in
      // another round, before anything is certified. A closure that keeps growing goes to an operator.
      if (++racedRounds > MAX_RACED_ROUNDS) {
        currentStep = 'verify';
        await parkForOperator('verify', 'ClosureNotSettling');
        racedRounds = 0;
      }
      continue;
    }
    if (verdict.findings > 0) {
      // Copies of erased content under other ids: nothing is certified until the DPO extends the request to them
      // (the next round erases them) or certifies with them stated (the next verification accepts them).
      await waitForDpo();
      continue;
    }
    const held = authorised.held;
    const status = held > 0 ? 'partial' : 'complete';
    const { certificateId } = await guarded('certify', () => quick.issueCertificate({ ...ref, status }));
    certificateIds.push(certificateId);
    if (held === 0) break;

    await setPhase('partial');
    // The bookkeeping between steps is guarded as the steps are: a store down past its retries parks the request
    // for an operator instead of ending the run with the request's stored state left behind.
    await guarded('certify', () =>
      quick.setErasureState({ ...ref, state: 'partial', note: 'records under legal hold' }),
    );
    await tellDpo({ kind: 'partial', certificateId });
    // Wait for a release that frees some of this request's records (other holds' releases wake us too).
    // The first look needs no signal: a hold may have been released while this round ran.
    let seen = -1;
    for (;;) {
      if (seen >= 0) await condition(() => holdsReleased > seen);
      seen = holdsReleased;
      const released = await guarded('certify', () => quick.countReleased(ref));
      if (released.released > 0) break;
    }
    await setPhase('running');
    await guarded('certify', () => quick.setErasureState({ ...ref, state: 'running' }));
  }

  // An extension not yet recorded is the request's too: it lands before the request reads completed.
  await condition(() => !extensionUnrecorded);
  await guarded('certify', () => quick.setErasureState({ ...ref, state: 'completed' }));
  await setPhase('completed');
  // The request is complete and certified: a mail server down now must not fail the workflow after the fact.
  await tellDpo({ kind: 'completed', certificateId: certificateIds[certificateIds.length - 1]! });
  return { state: 'completed', certificateIds, erased, held: 0 };

  async function waitForDpo(): Promise<void> {
    findingsDecision = null;
    currentStep = 'verify';
    await setPhase('needs-dpo');
    await guarded('verify', () => quick.raiseFindings(ref));
    await condition(() => findingsDecision !== null);
    await guarded('verify', () => quick.resolveFindings({ ...ref, ...findingsDecision! }));
    await setPhase('running');
    await guarded('verify', () => quick.setErasureState({ ...ref, state: 'running' }));
  }

  /** Disputes over erased records are closed without a decision, and their workflows told so. */
  async function closeDisputes(): Promise<void> {
    const { disputeIds } = await disputes.closeDisputesOfErased(ref);
    for (const id of disputeIds) {
      try {
        await getExternalWorkflowHandle(disputeWorkflowId(input.tenant, id)).signal(disputeVoidedSignal);
      } catch {
        // Already finished (or never started): the dispute is closed in the store either way.
      }
    }
  }

  /**
   * Verifies, and while residues are found, looks again after a durable wait (merging the index first when deleted
   * documents remain): a write that read a record before this request marked it may land its index document after
   * the purge, and its own second look withdraws and expunges it within about a minute. Only a clean look passes;
   * residues still there after the waits go to an operator.
   */
  async function verifyUntilSettled() {
    // Requests that verified before residues were looked at again replay without the waits.
    const looksAgain = patched('verify-looks-again-while-residues-settle');
    for (let attempt = 0; ; attempt++) {
      const result = await long.verifyErasure(ref);
      if (result.found === 0 && result.deletedDocs === 0) return result;
      if (!looksAgain || attempt >= VERIFY_WAITS_MS.length) {
        throw ApplicationFailure.create({
          message: `verification found ${result.found} residues and ${result.deletedDocs} deleted documents`,
          type: 'VerificationFailed',
        });
      }
      await sleep(VERIFY_WAITS_MS[attempt]!);
      if (result.deletedDocs > 0) await quick.expungeIndex(ref);
    }
  }

  /** Force merge until `_segments` reports no deleted documents, waiting durably between attempts. */
  async function expungeUntilClean(): Promise<void> {
    for (const wait of EXPUNGE_WAITS_MS) {
      const stats = await quick.expungeIndex(ref);
      if (stats.deletedDocs === 0) return;
      await sleep(wait);
    }
    throw ApplicationFailure.create({ message: 'deleted documents remain in segments', type: 'ExpungeIncomplete' });
  }

  /** The GDPR clock: warn the DPO three days before the due date, and again once it has passed. */
  async function watchDeadline(): Promise<void> {
    let warned = false;
    for (;;) {
      const target = warned ? Date.parse(dueAt) : Date.parse(dueAt) - 3 * DAY;
      deadlineChanged = false;
      const interrupted = await condition(
        () => deadlineChanged || isErasureFinished(phase),
        Math.max(1, target - Date.now()),
      );
      if (isErasureFinished(phase)) return;
      if (interrupted) {
        warned = false;
        continue;
      }
      // Detached from the run: a warning the mail server never took must not fail the erasure.
      await tellDpo({ kind: warned ? 'deadline-passed' : 'deadline-approaching', dueAt });
      if (warned) return;
      warned = true;
    }
  }
}
