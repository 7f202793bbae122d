/**
 * A witness over HTTP (c2sp.org/tlog-witness). Every status the spec names maps to a typed answer or refusal; what
 * the witness says in a refusal's body is kept out of messages (it may quote the request).
 */
import { ErrorType } from '../../../shared/errors.js';
import type { WitnessConfig } from '../../../config/witnesses-config.js';
import { cosignatureVerifier, parseCosignatureLines } from './cosignature.js';
import { formatAddCheckpoint, parseSizeConflict } from './add-checkpoint.js';
import { WitnessError, witnessRefused, type Witness } from './witness.port.js';

/** Refusals the spec names: why a witness would not cosign, in words that carry no data of the request. */
const REFUSALS: Record<number, string> = {
  400: 'the request was malformed',
  403: 'it does not know the log, or the checkpoint is not signed by a key it knows for the log',
  404: 'it has no add-checkpoint endpoint at this URL',
  422: 'the consistency proof does not join the checkpoint to the tree it has seen',
};

export function createHttpWitness(config: Pick<WitnessConfig, 'name' | 'url' | 'key' | 'timeoutMs'>): Witness {
  const verifier = cosignatureVerifier(config.key);
  const endpoint = new URL('add-checkpoint', config.url.endsWith('/') ? config.url : `${config.url}/`);
  return {
    name: config.name,
    verifier,
    async addCheckpoint(request) {
      const body = formatAddCheckpoint(request);
      let response: Response;
      let text: string;
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          body,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
          signal: AbortSignal.timeout(config.timeoutMs),
        });
        text = await response.text();
      } catch (error) {
        throw new WitnessError(ErrorType.Unavailable, config.name, `not reachable (${(error as Error).name})`);
      }
      if (response.status === 200) {
        const cosignatures = parseCosignatureLines(text);
        if (!cosignatures) throw witnessRefused(config.name, 'its answer is not cosignature lines', 200);
        return { kind: 'cosigned', cosignatures };
      }
      if (response.status === 409) {
        const witnessSize = parseSizeConflict(text);
        if (witnessSize === null) throw witnessRefused(config.name, 'its 409 does not state a tree size', 409);
        return { kind: 'size-conflict', witnessSize };
      }
      if (response.status >= 500)
        throw new WitnessError(ErrorType.Unavailable, config.name, `answered ${response.status}`, response.status);
      throw witnessRefused(
        config.name,
        `refused (${response.status}): ${REFUSALS[response.status] ?? 'an answer the protocol does not name'}`,
        response.status,
      );
    },
  };
}
