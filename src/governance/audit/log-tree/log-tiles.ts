/**
 * The audit log served as C2SP tlog-tiles, so that an auditor or a mirror fetches static, cacheable tiles and checks
 * them against a checkpoint with any tlog client, instead of asking Lethe for each proof. A hash tile lists the
 * hashes of complete subtrees (stored as the tree grows, see `log-tree-store.ts`); an entries tile lists the
 * entries, each the 32-byte chain hash of an audit entry behind a two-byte big-endian length. Ids and hashes only:
 * an entry's content stays in the chain export, which the tile's hash binds.
 */
import type { AuditLog } from '../audit-log.port.js';
import { DomainError, ErrorType } from '../../../shared/errors.js';
import type { LogTree } from './log-tree-store.js';
import { sizeHolding, TILE_HEIGHT, TILE_WIDTH, type TileCoordinates } from './tile-path.js';

export interface LogTiles {
  /** A tile's bytes; NotFound while the tree does not hold all of it. */
  read(tenant: string, tile: TileCoordinates): Promise<Uint8Array>;
}

export function createLogTiles(deps: { tree: LogTree; audit: AuditLog }): LogTiles {
  return {
    async read(tenant, tile) {
      const needed = sizeHolding(tile);
      if (!Number.isSafeInteger(needed))
        throw new DomainError(ErrorType.NotFound, 'tile: beyond any size the log can reach', 'tile');
      // Only what the tree holds: a tile must agree with some checkpoint of the log, and never change after.
      if ((await deps.tree.size(tenant)) < needed)
        throw new DomainError(ErrorType.NotFound, `tile: the log's tree does not hold ${needed} entries yet`, 'tile');
      const start = tile.index * TILE_WIDTH;
      if (tile.level >= 0) return concat(await deps.tree.hashesAt(tenant, tile.level * TILE_HEIGHT, start, tile.width));
      const parts: Uint8Array[] = [];
      for await (const entry of deps.audit.entries(tenant, { fromSeq: start + 1, toSeq: start + tile.width })) {
        const hash = Buffer.from(entry.hash, 'hex');
        parts.push(Uint8Array.of(hash.length >> 8, hash.length & 0xff), hash);
      }
      if (parts.length !== tile.width * 2)
        throw new Error(`audit chain of ${tenant}: ${parts.length / 2} entries where the tree holds ${tile.width}`);
      return concat(parts);
    },
  };
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}
