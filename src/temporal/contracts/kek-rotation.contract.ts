/**
 * The scheduled KEK rotation's workflow as its schedule and the workflow share it: result and type name.
 */
import { workflowContract } from './workflow-contract.js';

/** Counts only: what the rotation did. */
export interface KekRotationResult {
  epoch: number;
  rewrapped: number;
  destroyed: number[];
  /** Epochs that still wrapped a key after both passes: left alive, and named; the next rotation tries again. */
  kept: number[];
  /** Audit entries appended: one per tenant whose erasures waited on a destroyed epoch, per epoch. */
  recorded: number;
  tombsSwept: number;
}

/** The scheduled key-encryption-key rotation. */
export const kekRotationWorkflow = workflowContract<void, KekRotationResult>()('kekRotation');
