import { refKey, type DataKeyVault, type SealingKey } from './data-key-vault.js';
import { isSealed, keyPageOf, open, seal, SealBroken } from './content-seal.js';

/** A stored record that holds content: the field sealed at rest and opened when read. */
export interface ContentRecord {
  _id: string;
  tenant: string;
  content: string;
}

/**
 * Seals records' content under each record's own data key before it is written, and opens it when read. A record
 * whose key is destroyed reads as erased: `openAll` leaves it out, as if its row were already gone. Content written
 * before sealing was enabled is read as it is. Content that does not open under its record's key (a key made again
 * for the same id after a shred) reads as erased too.
 */
export interface ContentCipher {
  /** Copies of the records with their content sealed (the caller keeps the plaintext ones it was given). */
  sealAll<T extends ContentRecord>(records: readonly T[]): Promise<T[]>;
  /** The records with their content opened, in order; those whose key is gone are left out. */
  openAll<T extends ContentRecord>(records: readonly T[]): Promise<T[]>;
  /** `openAll` for one record; null when its key is gone. */
  openOne<T extends ContentRecord>(record: T | null): Promise<T | null>;
  /**
   * Makes the keys of records about to be written one by one, in one page of the vault: their seals then find the
   * keys in memory (and name that page). A record whose key this process holds keeps it; one never written leaves an
   * unused key, which opens nothing and is destroyed with its id by any erasure naming it.
   */
  prepare(tenant: string, ids: readonly string[]): Promise<void>;
  /**
   * Destroys the records' data keys: their content, wherever a copy of it is, no longer opens. Returns how many of
   * the records had a key; `beforeDestroy` is given that count before any key is destroyed.
   */
  shred(tenant: string, ids: readonly string[], beforeDestroy?: (keys: number) => Promise<void>): Promise<number>;
  readonly vault: DataKeyVault;
}

function byTenant<T extends { tenant: string }>(records: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const r of records) {
    const group = groups.get(r.tenant);
    if (group) group.push(r);
    else groups.set(r.tenant, [r]);
  }
  return groups;
}

export function createContentCipher(vault: DataKeyVault): ContentCipher {
  const openAll = async <T extends ContentRecord>(records: readonly T[]): Promise<T[]> => {
    const sealed = records.filter((r) => isSealed(r.content));
    if (sealed.length === 0) return [...records];
    // Each record's key is where its sealed value says: a page (read once for all its records) or its own document.
    const refOf = (r: T) => ({ id: r._id, page: keyPageOf(r.content) });
    const keys = new Map<string, Buffer>();
    for (const [tenant, group] of byTenant(sealed)) {
      for (const [ref, key] of await vault.existing(tenant, group.map(refOf))) keys.set(`${tenant}\u0000${ref}`, key);
    }
    const opened: T[] = [];
    for (const r of records) {
      if (!isSealed(r.content)) {
        opened.push(r);
        continue;
      }
      const key = keys.get(`${r.tenant}\u0000${refKey(refOf(r))}`);
      if (!key) continue;
      try {
        opened.push({ ...r, content: open(key, r.tenant, r._id, r.content) });
      } catch (error) {
        // Sealed under a key that is gone: a key made again for the same id (a retried write after a shred) does not
        // open it. Content that does not authenticate is never served; it reads as erased.
        if (!(error instanceof SealBroken)) throw error;
      }
    }
    return opened;
  };
  return {
    vault,
    async sealAll(records) {
      const out: (typeof records)[number][] = [];
      const keys = new Map<string, SealingKey>();
      for (const [tenant, group] of byTenant(records)) {
        for (const [id, key] of await vault.keysFor(
          tenant,
          group.map((r) => r._id),
        ))
          keys.set(`${tenant}\u0000${id}`, key);
      }
      for (const r of records) {
        const { key, page } = keys.get(`${r.tenant}\u0000${r._id}`)!;
        out.push({ ...r, content: seal(key, r.tenant, r._id, r.content, page) });
      }
      return out;
    },
    openAll,
    async openOne(record) {
      if (!record) return null;
      return (await openAll([record]))[0] ?? null;
    },
    async prepare(tenant, ids) {
      if (ids.length > 0) await vault.keysFor(tenant, ids);
    },
    shred: (tenant, ids, beforeDestroy) => vault.destroy(tenant, ids, beforeDestroy),
  };
}
