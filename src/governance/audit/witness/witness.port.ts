/**
 * A C2SP tlog-witness (https://c2sp.org/tlog-witness) as Lethe uses one: asked to cosign a log's checkpoint, given
 * the tree size it last saw for that log and the consistency proof from there; and, for a witness this host
 * administers, told about a log it does not know yet.
 */
import { DomainError, ErrorType, type ErrorTypeName } from '../../../shared/errors.js';
import type { Cosignature, CosignatureVerifier } from './cosignature.js';

export interface AddCheckpointRequest {
  /** The size of the log's tree the witness is believed to have seen last (0: none). */
  oldSize: number;
  /** The consistency proof from `oldSize` to the checkpoint's size (empty from 0). */
  proof: readonly Uint8Array[];
  /** The signed note of the checkpoint, signed by the log. */
  note: string;
}

/** A witness's answer that is not a refusal: its cosignatures, or the size it has seen when that is not `oldSize`. */
export type AddCheckpointAnswer =
  { kind: 'cosigned'; cosignatures: Cosignature[] } | { kind: 'size-conflict'; witnessSize: number };

export interface Witness {
  /** Ours, from the configuration: ids in logs, and the key of its cosignatures in a checkpoint. */
  readonly name: string;
  /** The witness's cosignature key, pinned in the configuration (never taken from the witness). */
  readonly verifier: CosignatureVerifier;
  /** Throws WitnessError: `WitnessRefused` for a refusal, `Unavailable` when it could not be asked. */
  addCheckpoint(request: AddCheckpointRequest): Promise<AddCheckpointAnswer>;
}

/** Tells a witness about a log: its origin and the verifier key its checkpoints are signed with. */
export interface LogEnrolment {
  enrol(origin: string, verifierKey: string): Promise<void>;
}

/** A witness that refused, or could not be asked; `witnessStatus` is its HTTP status when it answered. */
export class WitnessError extends DomainError {
  constructor(
    type: ErrorTypeName,
    readonly witness: string,
    message: string,
    readonly witnessStatus?: number,
  ) {
    super(type, `witness ${witness}: ${message}`);
  }
}

export const witnessRefused = (witness: string, message: string, status?: number) =>
  new WitnessError(ErrorType.WitnessRefused, witness, message, status);
