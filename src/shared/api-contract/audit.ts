/**
 * What the audit log's proof routes answer: the latest signed checkpoint of a tenant's log, and inclusion and
 * consistency proofs against its Merkle tree (RFC 6962). Hashes are standard base64; sizes count entries; a leaf's
 * index is its entry's seq − 1. Ids, sizes and hashes only.
 */
import { z } from 'zod';

const hash = z.string().describe('SHA-256, standard base64');

export const CheckpointViewSchema = z.strictObject({
  /** The log's origin: `<deployment origin>/<tenant>`, also the name of the key that signs it. */
  origin: z.string(),
  size: z.number(),
  root: hash,
  /**
   * The C2SP signed note: the checkpoint text, a blank line, then its signature lines: the log's own, then each
   * witness's cosignature (c2sp.org/tlog-cosignature), which is what a cosigned checkpoint looks like.
   */
  note: z.string(),
  /** The verifier key of the log's signature, `<name>+<key id>+<key>`, as Go's sumdb/note reads it. */
  verifierKey: z.string(),
  at: z.string(),
  /** The witnesses whose cosignature lines are in `note`: the configured name, the key's name and id, when. */
  cosignatures: z.array(
    z.strictObject({ witness: z.string(), keyName: z.string(), keyId: z.string(), at: z.string() }),
  ),
});
export type CheckpointView = z.infer<typeof CheckpointViewSchema>;

/**
 * The witnesses the deployment submits checkpoints to, read from its configuration: the name it keeps a witness's
 * cosignature under, and that witness's cosignature/v1 verifier key (`<name>+<key id>+<key>`).
 */
export const WitnessKeysViewSchema = z.strictObject({
  witnesses: z.array(z.strictObject({ name: z.string(), key: z.string() })),
});
export type WitnessKeysView = z.infer<typeof WitnessKeysViewSchema>;

export const InclusionProofSchema = z.strictObject({
  index: z.number(),
  size: z.number(),
  /** The leaf: RFC 6962 leaf hash of the entry's 32-byte chain hash. */
  leaf: hash,
  proof: z.array(hash),
});
export type InclusionProofView = z.infer<typeof InclusionProofSchema>;

export const ConsistencyProofSchema = z.strictObject({
  from: z.number(),
  to: z.number(),
  proof: z.array(hash),
});
export type ConsistencyProofView = z.infer<typeof ConsistencyProofSchema>;
