/**
 * What a certificate claims, place by place, built from what the verification measured: pure functions over the
 * request's facts (probes, compaction proofs, shredding, exposure, findings), so each claim can be tested alone and
 * the table in docs/erasure-certificate.md is checked against the same code.
 */
import { copiesLapseDue, lapseEpochs, type ShreddingRecord } from '../../src/governance/erasure/erasure-request.js';
import type {
  AssuranceClaim,
  AssuranceLapse,
  CertificateFinding,
  ProbeResult,
} from '../../src/governance/certificates/certificate.js';
import type { ExposureStatement } from '../../src/shared/api-contract/erasure.js';
import type { ExposureSummary } from '../../src/governance/erasure/side-records.js';
import { Collections } from '../../src/substrate/mongo/collections.js';
import type { StorageBackend } from '../../src/substrate/mongo/compaction.js';
import type { CompactionProof } from '../../src/substrate/postgres/proved-compaction.js';
import { checkedOn } from './index-reach.js';
import type { CopyFinding } from '../../src/governance/erasure/copy-findings.js';

/**
 * The decided findings, as the certificate names them: copies the request went on to erase (in the closure) and
 * copies certified as left. An extended copy that vanished before this request reached it is not claimed.
 */
export function certifiedFindings(
  findings: readonly CopyFinding[] | undefined,
  closure: ReadonlySet<string>,
): { findings?: CertificateFinding[] } {
  const decided = (findings ?? []).flatMap((f): CertificateFinding[] =>
    f.resolution === 'stated' || (f.resolution === 'extended' && closure.has(f.id))
      ? [{ id: f.id, kind: f.kind, probes: [...f.probes], resolution: f.resolution }]
      : [],
  );
  return decided.length > 0 ? { findings: decided } : {};
}

/** The certificate's exposure statement: counts always, times only where there was something to time. */
export function exposureStatement(e: ExposureSummary): ExposureStatement {
  return {
    retrievals: e.retrievals,
    ...(e.retrievals > 0 ? { byRoute: e.byRoute } : {}),
    prompts: e.prompts,
    ...(e.firstRetrievedAt ? { firstRetrievedAt: e.firstRetrievedAt.toISOString() } : {}),
    ...(e.lastRetrievedAt ? { lastRetrievedAt: e.lastRetrievedAt.toISOString() } : {}),
    ...(e.firstExposedAt ? { firstExposedAt: e.firstExposedAt.toISOString() } : {}),
    ...(e.lastExposedAt ? { lastExposedAt: e.lastExposedAt.toISOString() } : {}),
  };
}

/** What the governed search's text probe looked at: everything it could serve, or (older verifications) its answers. */
function apiProbed(probes: readonly ProbeResult[]): string {
  const sentences = checked(probes, 'text', 'api');
  const api = probes.filter((p) => p.kind === 'text' && p.target === 'api');
  if (api.length === 0 || api.some((p) => p.served === undefined))
    return `${sentences} erased sentences searched through the governed search path (history intent, a reader of every scope and sensitivity)`;
  const served = api.reduce((n, p) => n + (p.served ?? 0), 0);
  const searched = api.reduce((n, p) => n + (p.searched ?? 0), 0);
  return `${sentences} erased sentences checked against all ${served} records the governed search path could serve (history intent, a reader of every scope and sensitivity: every document its filters admit, re-read and judged as its hits are, with the records their disputes disclose), whatever the query and rank, and ${searched} of them also searched through it`;
}

export function checked(
  probes: readonly ProbeResult[],
  kind: ProbeResult['kind'],
  target: ProbeResult['target'],
): number {
  return probes.filter((p) => p.kind === kind && p.target === target).reduce((n, p) => n + p.checked, 0);
}

/**
 * What `VACUUM FULL` can be said to have dropped: L2 only when no snapshot older than the compaction was open to keep
 * a deleted row's version; otherwise L3 until a later compaction, naming why.
 */
function horizonOf(proof: CompactionProof | undefined): { said: string; lapses?: AssuranceLapse } {
  if (proof?.checked && !proof.heldBy)
    return { said: 'no snapshot older than the compaction being open to keep a deleted row (checked)' };
  if (proof?.heldBy)
    return {
      said: `but a ${proof.heldBy.kind} open since ${proof.heldBy.since ?? 'before it'} could still see deleted rows, whose versions it kept`,
      lapses: { condition: `that ${proof.heldBy.kind} ends and a later compaction of these tables runs` },
    };
  return {
    said: 'without a check that no older snapshot kept deleted rows (LETHE_POSTGRES_URL unset)',
    lapses: { condition: 'a later compaction runs with no older snapshot open' },
  };
}

/** What each place holds after the erasure, at the level the checks that ran can support. */
export function assuranceClaims(facts: {
  backend: StorageBackend;
  indexName: string;
  /** Indices the erasure reached besides the live one (a re-embedding's copy, an orphan). */
  otherIndices?: readonly string[];
  probes: readonly ProbeResult[];
  compacted: readonly string[];
  /** Copies outside the closure the DPO certified as left (named in the certificate's findings). */
  statedFindings?: number;
  /** The purge's crypto-shredding, when it destroyed data keys. */
  shredding?: ShreddingRecord;
  /** How many records the purges erased, and how many data keys they found to destroy. */
  sealing?: { records: number; keys: number };
  /** Whether the compaction was shown to drop the deleted rows (PostgreSQL); absent: not checked. */
  compactionProof?: CompactionProof;
  /** The same for the probe samples' collection, compacted after verification. */
  probeCompactionProof?: CompactionProof;
}): AssuranceClaim[] {
  const { probes } = facts;
  const keysCompacted = facts.compacted.includes(Collections.dataKeys);
  // The destroyed keys' table has a claim of its own (below): the records' place names the record collections.
  const collections = facts.compacted.filter((c) => c !== Collections.dataKeys).join(',') || 'none';
  const stated = facts.statedFindings ?? 0;
  const copies =
    stated > 0 ? `none outside the closure but the ${stated} stated findings` : 'none outside the closure either';
  const horizon = horizonOf(facts.compactionProof);
  const mongoClaim: AssuranceClaim =
    facts.backend === 'postgresql'
      ? {
          place: `postgresql:${collections}`,
          level: horizon.lapses ? 'L3' : 'L2',
          statement: `records deleted by id; VACUUM FULL (compact, force) rewrote each table, ${horizon.said}; its ANALYZE copies no document values (value statistics are off for FerretDB's tables); ${checked(probes, 'id', 'mongodb')} ids queried afterwards found none, and ${checked(probes, 'content-hash', 'mongodb')} content hashes and ${checked(probes, 'text', 'mongodb')} sentences looked for in every stored content of the tenant found ${copies}`,
          ...(horizon.lapses ? { lapses: horizon.lapses } : {}),
        }
      : {
          place: `mongodb:${collections}`,
          level: 'L3',
          statement: `records deleted by id; ${checked(probes, 'id', 'mongodb')} ids queried afterwards found none, and ${checked(probes, 'content-hash', 'mongodb')} content hashes and ${checked(probes, 'text', 'mongodb')} sentences looked for in every stored content of the tenant found ${copies}; compact(force) returns freed blocks but WiredTiger does not scrub them, so erased bytes may remain in unallocated file space`,
          lapses: {
            condition:
              'freed blocks are overwritten by later writes, or the data files are rewritten by an initial sync',
          },
        };
  // The probe samples are deleted and their collection compacted like the records: the same level on each backend.
  const probeHorizon = horizonOf(facts.probeCompactionProof);
  const probeClaim: AssuranceClaim =
    facts.backend === 'postgresql'
      ? {
          place: 'postgresql:erasure_probes',
          level: probeHorizon.lapses ? 'L3' : 'L2',
          statement: `probe samples (sealed under a data key destroyed with them) destroyed after verification; VACUUM FULL rewrote the table, ${probeHorizon.said}`,
          ...(probeHorizon.lapses ? { lapses: probeHorizon.lapses } : {}),
        }
      : {
          place: 'mongodb:erasure_probes',
          level: 'L3',
          statement:
            'probe samples destroyed after verification and the collection compacted; WiredTiger does not scrub freed blocks',
          lapses: {
            condition:
              'freed blocks are overwritten by later writes, or the data files are rewritten by an initial sync',
          },
        };
  return [
    {
      place: 'api:search',
      level: 'L1',
      statement: `${apiProbed(probes)}: no result is an erased record, and no result repeating one was found ${stated > 0 ? `outside the ${stated} stated findings` : 'under another id'}`,
    },
    ...[facts.indexName, ...(facts.otherIndices ?? [])].map((index): AssuranceClaim => ({
      place: `elasticsearch:${index}`,
      level: 'L2',
      statement: `documents deleted by id; force merge with only_expunge_deletes and flush; _segments read afterwards without a merge reports 0 deleted docs; ${checkedOn(probes, 'id', index)} id, ${checkedOn(probes, 'text', index)} text, ${checkedOn(probes, 'vector', index)} vector and ${checkedOn(probes, 'subject', index)} subject probes ran on this index and found no erased record; these text and vector probes and ${checked(probes, 'content-hash', 'elasticsearch')} content-hash probes across the tenant found ${copies}`,
    })),
    mongoClaim,
    probeClaim,
    ...(facts.shredding
      ? [
          {
            place: `${facts.backend === 'postgresql' ? 'postgresql' : 'mongodb'}:data_keys`,
            level: facts.backend === 'postgresql' && keysCompacted && !horizon.lapses ? 'L2' : 'L3',
            statement: `the erased records' data keys deleted from the vault${keysCompacted ? ` and the collection compacted${facts.backend === 'postgresql' ? `, ${horizon.said}` : ''}` : ''}; ${checked(probes, 'data-key', 'mongodb')} keys looked up afterwards found none`,
            ...(facts.backend === 'postgresql' && keysCompacted
              ? horizon.lapses
                ? { lapses: horizon.lapses }
                : {}
              : {
                  lapses: {
                    condition: 'freed blocks are overwritten by later writes, or the data files are rewritten',
                  },
                }),
          } satisfies AssuranceClaim,
        ]
      : []),
    ...copiesClaims(facts.backend, facts.shredding, facts.sealing),
    {
      place: 'temporal:history',
      level: 'L3',
      statement: 'workflow histories hold ids, keyed hashes and counts only, never content',
      lapses: { condition: 'namespace history retention period expires' },
    },
  ];
}

/** An interval as a person reads it: `24 h`, `7 d`, `90 min`. */
function duration(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  return `${Math.round(ms / 60_000)} min`;
}

/**
 * The write-ahead log and backups. Without shredding, their copies of the records survive until recycled or expired.
 * With it, the content in those copies is sealed under data keys that no longer exist in the live vault; the vault's
 * own copies of those keys (in the same log and backups) are wrapped under the KEK epoch current at the purge, so
 * the content is beyond reach once that epoch is destroyed by a rotation (`lethe keys rotate`). Fields kept in clear
 * for queries (ids, subjects, content hashes, times) stay in those copies until recycled or expired.
 */
function copiesClaims(
  backend: StorageBackend,
  shredding: ShreddingRecord | undefined,
  sealing: { records: number; keys: number } | undefined,
): AssuranceClaim[] {
  const log = backend === 'postgresql' ? 'postgresql:wal' : 'mongodb:oplog+journal';
  const recycled = {
    condition: 'WAL/oplog segments recycled after the next checkpoints (bounded by max_wal_size / oplog window)',
  };
  const reapply =
    '`lethe restore reapply-erasures` replays this certificate before a restored copy serves traffic: tombstones ' +
    'rewritten; records, lineage, index documents, staged batches, review and dispute reasons, exposures, probes ' +
    'and facts erased again; for a complete request, selector cleared, fences lowered and the holds of its partial ' +
    'certificates released. Drilled with backups from before the erasure, after its closure and after its marking';
  // Without a key destroyed there is no shredding to speak of, whatever was recorded.
  if (!shredding || (sealing !== undefined && sealing.keys === 0)) {
    return [
      {
        place: log,
        level: 'L3',
        statement: 'write-ahead records of the deleted documents remain until recycled',
        lapses: recycled,
      },
      {
        place: 'backups and elasticsearch:snapshots',
        level: 'L3',
        statement: `copies taken before or during the erasure keep its records. ${reapply}`,
        lapses: { condition: 'backup and snapshot retention period expires (runbooks/restore-backup.md)' },
      },
    ];
  }
  // Every epoch live at the purge: a copy of a key in the log or a backup may be wrapped under any of them.
  const epochs = lapseEpochs(shredding);
  const named = epochs.length === 1 ? `KEK epoch ${epochs[0]}` : `KEK epochs ${epochs.join(', ')}`;
  const sealed =
    `content sealed under per-record data keys (AES-256-GCM), destroyed at ${shredding.at.toISOString()} and ` +
    `forgotten by every process within ${shredding.boundMs} ms; the keys' own copies are wrapped under ${named} ` +
    `(${shredding.kek})`;
  // A KMS disables a destroyed key at once but keeps its material for a waiting period: the condition says so.
  const kmsWindow =
    shredding.kek === 'aws-kms'
      ? ' (the KMS disables the key at once and deletes its material after its 7–30-day waiting period, which only a KMS administrator can cancel)'
      : '';
  // With the rotation on its schedule the lapse has a date: the first rotation after the purge destroys every epoch
  // live at it, and the tenant's audit chain records when it did (`kek.epoch-destroyed`, one entry per epoch).
  const due = copiesLapseDue(shredding);
  const epochGone: AssuranceLapse = due
    ? { at: due.toISOString() }
    : {
        condition: `${named} ${epochs.length === 1 ? 'is destroyed by a rotation' : 'are all destroyed by rotations'} (lethe keys rotate)${kmsWindow}; ids, subjects, content hashes and times kept in clear remain until the copy is recycled or expires`,
      };
  // The date itself is the claim's `lapses.at`; the KMS's waiting period is on the DPO's page (epochMaterialDeletedBy).
  const dated = due
    ? `; the rotation scheduled every ${duration(shredding.rotationEveryMs!)} destroys ${epochs.length === 1 ? 'it' : 'them'} by the lapse date (audit chain: kek.epoch-destroyed); clear fields stay until the copy expires`
    : '';
  // Records written before sealing had no key to destroy: the sealed claims below do not cover them.
  const unsealed = sealing ? Math.max(0, sealing.records - sealing.keys) : 0;
  const inClear: AssuranceClaim[] =
    unsealed === 0
      ? []
      : [
          {
            place: `${log}:unsealed`,
            level: 'L3',
            statement: `${unsealed} of the ${sealing!.records} erased records were written before sealing and had no data key: write-ahead records of their rows remain in clear until recycled`,
            lapses: recycled,
          },
          {
            place: 'backups:unsealed',
            level: 'L3',
            statement: `copies taken before the erasure keep the rows of those ${unsealed} records in clear; lethe restore reapply-erasures erases them again before a restored copy serves (runbooks/restore-backup.md)`,
            lapses: { condition: 'backup and snapshot retention period expires (runbooks/restore-backup.md)' },
          },
        ];
  // The local keyring is a file on the database's host: one snapshot of that filesystem can hold both the copies and
  // the epochs that open them.
  const keyring: AssuranceClaim[] =
    shredding.kek === 'local-file'
      ? [
          {
            place: 'keyring:local-file',
            level: 'L3',
            statement: `the KEKs are a file on this host, not a KMS: a filesystem snapshot or backup holding that file beside the database's data keeps ${named} alive in its copy of the file, and so opens its copies of the erased content, whatever later rotations destroy in the live file; keep the file on another volume, out of the database's backups (docs/deploy.md)`,
            lapses: { condition: 'every snapshot or backup holding both the keyring file and the database expires' },
          },
        ]
      : [];
  return [
    ...keyring,
    {
      place: log,
      level: 'L3',
      statement: `write-ahead records of the deleted documents remain until recycled: ${sealed}${unsealed > 0 ? ` (the ${sealing!.keys} records that had a key)` : ''}${dated}`,
      lapses: epochGone,
    },
    ...inClear,
    {
      place: 'backups',
      level: 'L3',
      statement: `backups from before the erasure keep its rows: ${sealed}${dated}. A restore replays it first (lethe restore reapply-erasures, runbooks/restore-backup.md)`,
      lapses: epochGone,
    },
    {
      place: 'elasticsearch:snapshots',
      level: 'L3',
      statement:
        'index snapshots hold plaintext terms and vectors of the documents they copied: nothing is sealed there (exclude content indices from snapshots or expire them with the KEK epochs: docs/deploy.md)',
      lapses: { condition: 'snapshot retention period expires (runbooks/restore-backup.md)' },
    },
  ];
}
