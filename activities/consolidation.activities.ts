import type { MemoryStore } from '../src/substrate/memories/memory-store.js';
import type { StagingStore } from '../src/substrate/staging/staging-store.js';
import type { TombstoneSpec, TombstoneStore } from '../src/substrate/tombstones/tombstone-store.js';
import type { StagedBatch } from '../src/ingestion/admit-batch.js';
import { principalScope } from '../src/substrate/model/records.js';
import type { TenantMacs } from '../src/substrate/fingerprint.js';
import { subjectContentParts } from '../src/substrate/content-hash.js';
import type { Summariser } from '../src/substrate/views/summariser.port.js';
import {
  CONSOLIDATION_RULE,
  groupable,
  planViews,
  viewValidity,
  type SkipReason,
  type ViewGroup,
} from '../src/substrate/views/consolidation-plan.js';
import type { MemoryRecord } from '../src/substrate/model/records.js';
import type { RestrictionStore } from '../src/governance/rights/restriction-store.js';
import { mayProcess, type ProcessingContext, type Rule } from '../src/governance/read/processing-judge.js';
import type { ConsolidationPlanInput } from '../src/temporal/contracts/consolidation.contract.js';

/** Active records one run reads at most, in pages: a namespace larger than this is consolidated in part. */
export const MAX_RUN_INPUTS = 20_000;
const PAGE = 1000;

export interface ConsolidationActivityDeps {
  memories: MemoryStore;
  staging: StagingStore;
  tombstones: TombstoneStore;
  /** The tenants' keys of content hashes: tombstones of erased content are looked for in every stored form. */
  tenantMacs: TenantMacs;
  summariser: Summariser;
  /** The tenant's restrictions and objections: a restricted or objected subject's records are not consolidated. */
  restrictions: Pick<RestrictionStore, 'snapshot'>;
  now?: () => Date;
}

/** Ids and counts only: the views' content stays in their stages. */
export interface ConsolidationPlan {
  read: number;
  /** Each view still to build, with the stage its write waits in. */
  staged: { viewId: string; stageId: string; inputs: number }[];
  /** Views already built (or decided) from the same inputs, rule, model and prompt. */
  existing: number;
  /** Views not built because an input, its content or the view itself was erased meanwhile. */
  tombstoned: number;
  skipped: Partial<Record<SkipReason, number>>;
  /** Records of the namespace the processing judge kept out, by the rule they broke (counts only). */
  refused: Partial<Record<Rule, number>>;
}

/**
 * Whether a record read by a run may go into a view: grouped by shape here, judged by the processing judge (status,
 * scope, holds, restriction and objection, valid time, contest and stale marks). Null: not of this namespace.
 */
export function consolidationVerdict(record: MemoryRecord, namespace: string, ctx: ProcessingContext) {
  return groupable(record, namespace) ? mayProcess('consolidate', record, ctx) : null;
}

/** What an erasure tombstones for the view or its inputs: any of them found, the view is not built. */
function erasedSpecs(macs: TenantMacs, tenant: string, group: ViewGroup, content: string): TombstoneSpec[] {
  const specs: TombstoneSpec[] = [{ kind: 'record', parts: [group.id] }];
  // An erasure tombstones the hash form its rows stored: every form of each content is looked for.
  const aboutContent = (subjects: readonly string[], text: string) =>
    subjectContentParts(macs, tenant, subjects, text).forEach((parts) =>
      specs.push({ kind: 'subject-content', parts }),
    );
  for (const input of group.inputs) {
    specs.push({ kind: 'record', parts: [input._id] });
    aboutContent(input.subjects, input.content);
  }
  aboutContent(group.subjects, content);
  return specs;
}

/** Consolidation's activities: reading and planning here, writing through the ingestion workflow's admission. */
export function createConsolidationActivities(deps: ConsolidationActivityDeps) {
  return {
    async planConsolidation(input: ConsolidationPlanInput): Promise<ConsolidationPlan> {
      const scope = input.scope === 'tenant' ? 'tenant' : principalScope(input.principal);
      const ctx: ProcessingContext = {
        tenant: input.tenant,
        scopes: [scope],
        purposes: 'any',
        restrictions: await deps.restrictions.snapshot(input.tenant),
        now: (deps.now ?? (() => new Date()))(),
      };
      const records: MemoryRecord[] = [];
      const refused: Partial<Record<Rule, number>> = {};
      let read = 0;
      let after = null;
      do {
        const page = await deps.memories.pageByStatus(input.tenant, 'active', PAGE, after);
        read += page.items.length;
        for (const r of page.items) {
          const verdict = consolidationVerdict(r, input.namespace, ctx);
          if (verdict?.allowed) records.push(r);
          else if (verdict) refused[verdict.rule] = (refused[verdict.rule] ?? 0) + 1;
        }
        after = page.next;
      } while (after && read < MAX_RUN_INPUTS);
      const model = { modelVersion: deps.summariser.modelVersion, promptVersion: deps.summariser.promptVersion };
      const { groups, skipped } = planViews(input.tenant, records, model);
      const known = new Set(
        (
          await deps.memories.getMany(
            input.tenant,
            groups.map((g) => g.id),
          )
        ).map((r) => r._id),
      );
      const plan: ConsolidationPlan = { read, staged: [], existing: 0, tombstoned: 0, skipped, refused };
      for (const group of groups) {
        if (known.has(group.id)) {
          plan.existing++;
          continue;
        }
        const content = await deps.summariser.summarise(
          group.inputs.map((r) => ({ id: r._id, content: r.content, validFrom: r.validFrom })),
        );
        if (
          (
            await deps.tombstones.findTombstoned(
              input.tenant,
              erasedSpecs(deps.tenantMacs, input.tenant, group, content),
            )
          ).length > 0
        ) {
          plan.tombstoned++;
          continue;
        }
        const first = group.inputs[0]!;
        // planViews left out groups without a common valid time.
        const validity = viewValidity(group.inputs)!;
        const stageId = `stg_view_${group.key.slice(0, 32)}`;
        const body: StagedBatch = {
          roles: input.roles,
          events: [],
          memories: [
            {
              id: group.id,
              namespace: input.namespace,
              subjects: group.subjects,
              kind: group.kind,
              content,
              validFrom: validity.validFrom.toISOString(),
              ...(validity.validTo ? { validTo: validity.validTo.toISOString() } : {}),
              purpose: first.policy.purpose,
              sensitivity: first.policy.sensitivity,
              jurisdiction: first.policy.jurisdiction,
              trustTier: group.trustTier,
              confidence: group.confidence,
              scope: input.scope,
              provenance: {
                // The inputs are the view's lineage (their events reach it through them), and its evidence: the
                // derivation audit reads cited parents. Citing their events directly would read external content
                // afresh, which a reviewer promoted once through the inputs.
                eventIds: [],
                parentIds: group.inputs.map((r) => r._id),
                derivationRule: CONSOLIDATION_RULE,
                modelVersion: deps.summariser.modelVersion,
                ...(deps.summariser.promptVersion ? { promptVersion: deps.summariser.promptVersion } : {}),
              },
            },
          ],
        };
        // An upsert: a retried attempt stages the same view under the same id.
        await deps.staging.put({
          _id: stageId,
          tenant: input.tenant,
          principal: input.principal,
          body,
          createdAt: new Date(),
        });
        plan.staged.push({ viewId: group.id, stageId, inputs: group.inputs.length });
      }
      return plan;
    },
  };
}
