import type { Db } from 'mongodb';
import { BoundedMap } from '../../shared/bounded-map.js';
import { Collections, isDuplicateKey } from '../../substrate/mongo/collections.js';
import type { RevocationCheck } from './tokens.js';

interface RevokedTokenDoc {
  _id: string;
  /** When the token would have expired: past it the entry is useless, and the next revocation removes it. */
  expiresAt: Date;
}

/** Revoked token ids (`jti`), checked on every authenticated request. */
export interface RevokedTokenStore extends RevocationCheck {
  ensureIndexes(): Promise<void>;
  /** Idempotent; `expiresAt` is when the token expires anyway (the latest is kept). */
  revoke(jti: string, expiresAt: Date): Promise<void>;
}

/**
 * How long a "not revoked" answer is reused: a revocation made through another process takes effect within this
 * time (one made through this process, at once). A "revoked" answer is kept until the entry expires.
 */
export const REVOCATION_CACHE_MS = 5_000;
const CACHE_ENTRIES = 10_000;

export function createMongoRevokedTokenStore(db: Db, clock: () => number = Date.now): RevokedTokenStore {
  const revoked = db.collection<RevokedTokenDoc>(Collections.revokedTokens);
  const cache = new BoundedMap<string, { revoked: boolean; until: number }>(CACHE_ENTRIES);
  return {
    async ensureIndexes() {
      // The local server (FerretDB) has no TTL indexes: each revocation removes the entries that expired instead.
      await revoked.createIndex({ expiresAt: 1 });
    },
    async revoke(jti, expiresAt) {
      await revoked.deleteMany({ expiresAt: { $lte: new Date(clock()) } });
      try {
        await revoked.insertOne({ _id: jti, expiresAt });
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        await revoked.updateOne({ _id: jti, expiresAt: { $lt: expiresAt } }, { $set: { expiresAt } });
      }
      cache.set(jti, { revoked: true, until: expiresAt.getTime() });
    },
    async isRevoked(jti) {
      const now = clock();
      const cached = cache.get(jti);
      if (cached && cached.until > now) return cached.revoked;
      // An expired entry not yet removed revokes nothing that could still verify.
      const found = await revoked.findOne({ _id: jti }, { projection: { expiresAt: 1 } });
      const isRevoked = !!found && found.expiresAt.getTime() > now;
      cache.set(jti, { revoked: isRevoked, until: isRevoked ? found.expiresAt.getTime() : now + REVOCATION_CACHE_MS });
      return isRevoked;
    },
  };
}
