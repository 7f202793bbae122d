/**
 * Signed checkpoints of each tenant's audit tree. Publishing one extends the tree to the chain's head, signs a C2SP
 * checkpoint of that size as a signed note, and keeps it under its size: the same size signed twice (two workers at
 * once) is the same note, since Ed25519 signs deterministically, and is kept once. Each tenant's log has its own
 * origin, `<LETHE_LOG_ORIGIN>/<tenant>`, which is also its key's name, so a witness can tell the logs apart.
 *
 * Only a process holding the signing key publishes (the worker); any process reads what was published.
 */
import type { Collection, Db } from 'mongodb';
import { Collections, findOwn, insertOnce, mapBounded } from '../../../substrate/mongo/collections.js';
import { chainLinkId } from '../../../substrate/mongo/hash-chain.js';
import type { CertificateSigner } from '../../certificates/signing.js';
import type { AuditLog } from '../audit-log.port.js';
import { auditTenants, recordCheckpointSize, registerAuditTenant } from './audit-tenants.js';
import { formatCheckpoint } from './checkpoint.js';
import type { LogTree } from './log-tree-store.js';
import { noteSigner, signNote } from './signed-note.js';
import type { Cosignature } from '../witness/cosignature.js';

export interface SignedCheckpoint {
  tenant: string;
  size: number;
  /** Base64 root hash. */
  root: string;
  /** The signed note, as an auditor keeps it and a witness cosigns it (the log's own signature only). */
  note: string;
  at: Date;
  /** Witnesses' cosignatures of this checkpoint, by the configured witness's name (`LETHE_WITNESSES`). */
  cosignatures?: Record<string, Cosignature>;
}

type CheckpointDoc = SignedCheckpoint & { _id: string };

export interface CheckpointStore {
  /** The log's origin (and key name) for a tenant. */
  originOf(tenant: string): string;
  /** The verifier key (`name+id+key`) of a tenant's checkpoints, under the deployment's signing key. */
  verifierKeyOf(tenant: string): string;
  latest(tenant: string): Promise<SignedCheckpoint | null>;
  atSize(tenant: string, size: number): Promise<SignedCheckpoint | null>;
  /** Signs a checkpoint of the tenant's whole chain, unless the latest already covers it; null for an empty log. */
  publish(tenant: string): Promise<SignedCheckpoint | null>;
  /** Publishes for every tenant whose log grew; returns the checkpoints this call signed. */
  publishAll(): Promise<SignedCheckpoint[]>;
  /** Keeps a witness's cosignature with the checkpoint of that size (verified by the caller). */
  addCosignature(tenant: string, size: number, witness: string, cosignature: Cosignature): Promise<void>;
  /** Records that a tenant has an audit log, so that `publishAll` visits it. Idempotent. */
  register(tenant: string): Promise<void>;
}

export interface CheckpointStoreDeps {
  audit: AuditLog;
  tree: LogTree;
  /** The deployment's signing key; a process with the public half only reads and never publishes. */
  signer: Pick<CertificateSigner, 'publicKeyPem' | 'sign'>;
  /** `LETHE_LOG_ORIGIN`: each tenant's log is `<origin>/<tenant>`. */
  origin: string;
  clock?: () => Date;
}

const PUBLISH_CONCURRENCY = 4;
const COSIGNATURE_WRITES = 3;

export function createCheckpointStore(db: Db, deps: CheckpointStoreDeps): CheckpointStore {
  const checkpoints: Collection<CheckpointDoc> = db.collection<CheckpointDoc>(Collections.auditCheckpoints);
  const tenants = auditTenants(db);
  const clock = deps.clock ?? (() => new Date());
  const originOf = (tenant: string) => `${deps.origin}/${tenant}`;
  const signerOf = (tenant: string) => noteSigner(originOf(tenant), deps.signer);
  const strip = ({ _id: _ignored, ...c }: CheckpointDoc): SignedCheckpoint => c;

  const atSize = async (tenant: string, size: number) => {
    const doc = await findOwn(checkpoints, tenant, chainLinkId(tenant, size));
    return doc ? strip(doc) : null;
  };
  const latest = async (tenant: string) => {
    const known = await findOwn(tenants, tenant, tenant);
    return known?.checkpointSize ? atSize(tenant, known.checkpointSize) : null;
  };

  const publish = async (tenant: string): Promise<SignedCheckpoint | null> => {
    const head = await deps.audit.head(tenant);
    if (!head) return null;
    const previous = await latest(tenant);
    if (previous && previous.size >= head.seq) return previous;
    const treeSize = await deps.tree.size(tenant);
    if (treeSize < head.seq)
      await deps.tree.extend(tenant, deps.audit.entries(tenant, { fromSeq: treeSize + 1, toSeq: head.seq }));
    const size = head.seq;
    const root = Buffer.from(await deps.tree.root(tenant, size)).toString('base64');
    const text = formatCheckpoint({ origin: originOf(tenant), size, root: Buffer.from(root, 'base64') });
    const { doc } = await insertOnce(checkpoints, {
      _id: chainLinkId(tenant, size),
      tenant,
      size,
      root,
      note: signNote(text, [signerOf(tenant)]),
      at: clock(),
    });
    await recordCheckpointSize(tenants, tenant, size);
    return strip(doc);
  };

  return {
    originOf,
    verifierKeyOf: (tenant) => signerOf(tenant).verifierKey,
    latest,
    atSize,
    publish,
    async publishAll() {
      // One read of the registry, then per tenant one head probe (usually one `_id` lookup): a log that did not grow
      // costs nothing more.
      const all = await tenants.find({}, { projection: { _id: 1, checkpointSize: 1 } }).toArray();
      const signed = await mapBounded(all, PUBLISH_CONCURRENCY, async ({ _id, checkpointSize }) => {
        const head = await deps.audit.head(_id);
        if (!head || head.seq <= (checkpointSize ?? 0)) return null;
        const published = await publish(_id);
        return published && published.size > (checkpointSize ?? 0) ? published : null;
      });
      return signed.filter((c): c is SignedCheckpoint => c !== null);
    },
    async addCosignature(tenant, size, witness, cosignature) {
      const _id = chainLinkId(tenant, size);
      // FerretDB applies concurrent updates of one document read-modify-write (docs/STACK.md): two witnesses'
      // cosignatures written at once may lose one. Read back, and write again until it stands.
      for (let attempt = 0; attempt < COSIGNATURE_WRITES; attempt++) {
        await checkpoints.updateOne({ _id, tenant }, { $set: { [`cosignatures.${witness}`]: cosignature } });
        const doc = await findOwn(checkpoints, tenant, _id);
        if (!doc) throw new Error(`checkpoint ${size} of the log is not stored`);
        if (doc.cosignatures?.[witness]?.line === cosignature.line) return;
      }
      throw new Error('the cosignature could not be kept');
    },
    register: (tenant) => registerAuditTenant(tenants, tenant),
  };
}
