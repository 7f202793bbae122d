import { ApplicationFailure } from '@temporalio/activity';
import { holdSubjectHashes } from '../../src/governance/holds/hold-store.js';
import { holdCovers } from '../../src/governance/holds/legal-hold.js';
import { Collections } from '../../src/substrate/mongo/collections.js';
import { evaluatePolicy } from '../../src/governance/policy/evaluate.js';
import {
  beating,
  isEvent,
  selectorFence,
  type ErasureActivityDeps,
  type ErasureContext,
  type ErasureRef,
} from './erasure-context.js';

export interface AuthoriseResult {
  allowed: boolean;
  toErase: number;
  held: number;
  holdIds: string[];
}

/** Rounds of (fence, locate again, walk again) before a closure that keeps growing is handed to an operator. */
const MAX_SETTLE_ROUNDS = 8;

/** Steps 1–3: what the request reaches (located, derived), fenced against new writes, and what holds keep. */
export function createScopeActivities(deps: ErasureActivityDeps, ctx: ErasureContext) {
  return {
    /** Step 1: fence the selector, then the records it names, within the tenant only. */
    async locateTargets(ref: ErasureRef): Promise<{ located: number }> {
      return ctx.step(ref, 'locate', async () => {
        const req = await ctx.request(ref);
        if (req.state === 'received') await deps.requests.setState(ref.tenant, ref.requestId, 'running');
        const selector = await ctx.selectorOf(ref);
        // The fence goes up first: a write that passed its check before it is raised is found by the closure's
        // re-location or by the verification's, and erased in another round.
        const fenced = await deps.fences.raise(ref.tenant, ref.requestId, selectorFence(selector));
        const ids = [...new Set(await ctx.locateIds(ref.tenant, selector))];
        await deps.sets.put(ref.tenant, ref.requestId, 'located', ids);
        return {
          located: ids.length,
          events: ids.filter(isEvent).length,
          memories: ids.filter((i) => !isEvent(i)).length,
          fenced,
        };
      });
    },

    /**
     * Step 2: everything transitively derived from the located records, by registered lineage — recomputed until
     * it stops growing. Each round fences every record found (a derivation citing it is refused from then on),
     * then locates and walks again; a round that finds nothing new ends it. Roots include what earlier rounds of
     * this request erased or kept under hold, so a record derived from them meanwhile is reached too.
     */
    async computeClosure(ref: ErasureRef): Promise<{ total: number; derived: number; collateral: number }> {
      return beating(() =>
        ctx.step(ref, 'closure', async () => {
          const selector = await ctx.selectorOf(ref);
          const purged = (await deps.sets.get(ref.tenant, ref.requestId, 'purged')).ids;
          const held = (await deps.sets.get(ref.tenant, ref.requestId, 'held')).ids;
          let located = new Set((await deps.sets.get(ref.tenant, ref.requestId, 'located')).ids);
          let previous = new Set<string>();
          type Described = Awaited<ReturnType<typeof ctx.describeWithFacts>>[number];
          let current: Described[] = [];
          const described = new Map<string, Described>();
          let lineageRounds = 0;
          let settle = 0;
          for (;;) {
            settle++;
            located = new Set([...located, ...(await ctx.locateIds(ref.tenant, selector))]);
            const walk = await deps.lineage.closure(ref.tenant, [...new Set([...located, ...purged, ...held])]);
            lineageRounds = walk.rounds;
            // Lineage may name records already gone: the closure is what exists now. A record described in an earlier
            // settle round is not read again (its subjects and namespace do not change; one purged meanwhile is
            // absent from every later step's reads anyway): only what this round found new.
            const wanted = [...new Set([...located, ...held, ...walk.derived])];
            for (const record of await ctx.describeWithFacts(
              ref.tenant,
              wanted.filter((id) => !described.has(id)),
            )) {
              described.set(record.id, record);
            }
            current = wanted.flatMap((id) => described.get(id) ?? []);
            const grew = current.some((r) => !previous.has(r.id));
            if (!grew) break;
            if (settle === MAX_SETTLE_ROUNDS) {
              throw ApplicationFailure.retryable(`the closure still grew after ${settle} rounds`, 'ClosureNotSettling');
            }
            await deps.fences.raise(
              ref.tenant,
              ref.requestId,
              current.map((r) => ({ kind: 'record' as const, value: r.id })),
            );
            previous = new Set(current.map((r) => r.id));
          }
          const ids = current.map((r) => r.id);
          const existingLocated = ids.filter((id) => located.has(id));
          await deps.sets.put(ref.tenant, ref.requestId, 'located', [...located]);
          await deps.sets.put(ref.tenant, ref.requestId, 'closure', ids);
          // What was read of each record goes forward to the marking, which then need not read them all again.
          await deps.sets.putFacts(ref.tenant, ref.requestId, {
            memories: current.flatMap((r) => (r.memory ? [r.memory] : [])),
            events: current.flatMap((r) => (r.event ? [r.event] : [])),
          });
          // Collateral: derived records none of whose subjects is a subject of a located record.
          const locatedSubjects = new Set(current.filter((r) => located.has(r.id)).flatMap((r) => r.subjects));
          const derived = current.filter((r) => !located.has(r.id));
          const collateralNow = derived.filter((r) => !r.subjects.some((s) => locatedSubjects.has(s))).map((r) => r.id);
          // Across rounds: what earlier rounds purged counts in the request's closure as well, and so does the
          // collateral they swept in (the records are gone and cannot be described again; their ids are kept).
          const all = new Set([...purged, ...ids]);
          const earlierCollateral = (await deps.sets.get(ref.tenant, ref.requestId, 'collateral')).ids;
          const collateralIds = [...new Set([...earlierCollateral, ...collateralNow])].filter(
            (id) => all.has(id) && !located.has(id),
          );
          await deps.sets.put(ref.tenant, ref.requestId, 'collateral', collateralIds);
          const collateral = collateralIds.length;
          const allLocated = [...all].filter((id) => located.has(id)).length;
          const counts = {
            total: all.size,
            located: allLocated,
            derived: all.size - allLocated,
            collateral,
            rounds: lineageRounds,
            settleRounds: settle,
            thisRound: ids.length,
            thisRoundLocated: existingLocated.length,
          };
          await deps.requests.update(ref.tenant, ref.requestId, { counts });
          return counts;
        }),
      );
    },

    /** Step 3: may this requester erase on this ground (policy, default deny)? Which records are held? */
    async authoriseAndCheckHolds(ref: ErasureRef): Promise<AuthoriseResult> {
      let result: AuthoriseResult = { allowed: false, toErase: 0, held: 0, holdIds: [] };
      await ctx.step(ref, 'authorise', async () => {
        const req = await ctx.request(ref);
        const decision = evaluatePolicy(deps.erasurePolicy, {
          requesterRoles: req.requesterRoles,
          legalGround: req.legalGround,
          selectorKind: req.selectorKind,
        });
        await deps.requests.update(ref.tenant, ref.requestId, {
          policyDecision: {
            policyId: decision.policyId,
            policyVersion: decision.policyVersion,
            outcome: decision.outcome,
            ruleId: decision.ruleId,
          },
        });
        await deps.audit.append({
          tenant: ref.tenant,
          actor: req.requester,
          action: 'erasure.authorised',
          target: ref.requestId,
          outcome: decision.outcome === 'allow' ? 'ok' : 'refused',
          details: { policyId: decision.policyId, policyVersion: decision.policyVersion, rule: decision.ruleId },
          idempotencyKey: `erasure:${ref.requestId}:authorise`,
        });
        if (decision.outcome !== 'allow') return { allowed: 0, toErase: 0, held: 0 };
        const closure = (await deps.sets.get(ref.tenant, ref.requestId, 'closure')).ids;
        const holds = await deps.holds.active(ref.tenant);
        const holdOf: Record<string, string> = {};
        if (holds.length > 0) {
          const subjectHashes = (subject: string) => holdSubjectHashes(deps.fingerprints, ref.tenant, subject);
          for (const record of await ctx.describe(ref.tenant, closure)) {
            const hold = holds.find((h) => holdCovers(h, record, subjectHashes));
            if (hold) holdOf[record.id] = hold._id;
          }
        }
        const held = Object.keys(holdOf);
        const toErase = closure.filter((id) => !(id in holdOf));
        const holdIds = [...new Set(Object.values(holdOf))];
        for (const holdId of holdIds) {
          const ids = held.filter((id) => holdOf[id] === holdId);
          await deps.memories.restrict(
            ref.tenant,
            ids.filter((id) => !isEvent(id)),
            holdId,
          );
          await deps.events.restrict(ref.tenant, ids.filter(isEvent), holdId);
        }
        await deps.sets.put(ref.tenant, ref.requestId, 'erase', toErase);
        await deps.sets.put(ref.tenant, ref.requestId, 'held', held, holdOf);
        await deps.requests.update(ref.tenant, ref.requestId, { holdIds });
        result = { allowed: true, toErase: toErase.length, held: held.length, holdIds };
        return { allowed: 1, toErase: toErase.length, held: held.length };
      });
      if (!result.allowed) {
        await deps.requests.setState(ref.tenant, ref.requestId, 'rejected', 'not authorised by policy');
        // Nothing will be erased: the fences come down and the selector is kept only as its keyed hash (its
        // clear row rewritten away).
        await deps.fences.lower(ref.tenant, ref.requestId);
        await deps.requests.dropSelector(ref.tenant, ref.requestId);
        await deps.storage.compact([Collections.erasureSelectors]);
        await deps.sets.drop(ref.tenant, ref.requestId);
      }
      return result;
    },

    /** How many held records a released hold has freed (the next round's closure picks them up). */
    async countReleased(ref: ErasureRef): Promise<{ released: number; stillHeld: number }> {
      const held = await deps.sets.get(ref.tenant, ref.requestId, 'held');
      const active = new Set((await deps.holds.active(ref.tenant)).map((h) => h._id));
      const released = held.ids.filter((id) => !active.has(held.holdOf[id]!)).length;
      return { released, stillHeld: held.ids.length - released };
    },
  };
}
