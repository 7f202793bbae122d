/**
 * What an erasure asks of the database beneath the stores, and nothing more: which engine backs the wire protocol,
 * making deletions physical (with or without waiting out older snapshots), and a scan of stored content. The
 * erasure's activities take this port instead of the raw database handle, so the only collection-level power they
 * hold is the one the certificate speaks of.
 */
import type { Db } from 'mongodb';
import type { ContentCipher } from '../crypto/content-cipher.js';
import type { SnapshotHorizon } from '../postgres/snapshot-horizon.js';
import {
  DEFAULT_PROVED_COMPACTION,
  compactProved,
  type ProvedCompactionOptions,
} from '../postgres/proved-compaction.js';
import { compactCollections, storageBackendOf, type StorageBackend } from './compaction.js';
import { idsWithContent } from './content-scan.js';

export interface ErasureStorage {
  /** What backs the wire protocol; it decides what a compaction proves. Asked once, then remembered. */
  backend(): Promise<StorageBackend>;
  /** Rewrites the collections so that deleted rows leave the live files; answers those that exist. */
  compact(names: readonly string[]): Promise<string[]>;
  /** The same, once no snapshot older than the call is open (or the wait ran out), saying which. */
  compactProved(names: readonly string[]): Promise<Awaited<ReturnType<typeof compactProved>>>;
  /** Ids of the tenant's rows in `collection` whose opened content `matches`. */
  idsWithContent(collection: string, tenant: string, matches: (content: string) => boolean): Promise<string[]>;
}

export function createErasureStorage(
  db: Db,
  cipher: ContentCipher,
  options: { snapshots?: SnapshotHorizon; provedCompaction?: ProvedCompactionOptions } = {},
): ErasureStorage {
  let backend: Promise<StorageBackend> | null = null;
  return {
    backend: () =>
      (backend ??= storageBackendOf(db).catch((error: unknown) => {
        // A failed ask is not remembered: the next one asks again.
        backend = null;
        throw error;
      })),
    compact: (names) => compactCollections(db, names),
    compactProved: (names) =>
      compactProved(db, names, options.snapshots, options.provedCompaction ?? DEFAULT_PROVED_COMPACTION),
    idsWithContent: (collection, tenant, matches) => idsWithContent(db, cipher, collection, tenant, matches),
  };
}
