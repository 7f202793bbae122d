import type * as KmsSdk from '@aws-sdk/client-kms';
import type { KMSClient, KeyMetadata } from '@aws-sdk/client-kms';
import { KekEpochGone, type KekEpoch, type KeyEncryptionKeys } from './key-encryption-keys.port.js';

/**
 * KEKs in AWS KMS (or anything that speaks its API). Each epoch is a symmetric KMS key named by an alias
 * `<prefix>/epoch-<n>`; the KMS holds the key material and never hands it out, so a data key is wrapped and unwrapped
 * by `Encrypt` and `Decrypt` calls, with the record's context bound as the encryption context.
 *
 * Destroying an epoch tags the key with the time, disables it (from that moment nothing it wrapped can be unwrapped,
 * in any copy) and schedules the deletion of its material after the KMS's waiting period (7–30 days), during which
 * only a KMS administrator could cancel it. `epochs()` reports the disabling as `destroyedAt` and the scheduled end as
 * `materialDeletedBy`.
 */
export interface AwsKmsKekOptions {
  region: string;
  /** A KMS-compatible endpoint (a VPC endpoint, or a local emulator); the SDK's default when absent. */
  endpoint?: string;
  /** Alias prefix of this deployment's epochs, e.g. `alias/lethe`. */
  aliasPrefix: string;
  /** The KMS's waiting period before a destroyed epoch's material is deleted. */
  deletionWindowDays: number;
  /** How long the list of epochs is trusted before it is read again (a wrap refused by a disabled key reads it at once). */
  listTtlMs?: number;
  /** Makes the first epoch when there is none (development and test); otherwise `lethe keys init` does. */
  createFirstEpoch?: boolean;
  /** Credentials, for an emulator; the SDK's default chain (environment, profile, role) when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

interface EpochKey {
  epoch: number;
  keyId: string;
  meta: KeyMetadata;
}

const CONTEXT_FIELD = 'lethe:context';
const DESTROYED_TAG = 'lethe:destroyed-at';

/** A KMS refusal that means the key cannot unwrap any more (disabled, pending deletion, deleted). */
function keyIsGone(error: unknown): boolean {
  const name = (error as { name?: string }).name;
  return name === 'DisabledException' || name === 'KMSInvalidStateException' || name === 'NotFoundException';
}

export function createAwsKmsKeks(options: AwsKmsKekOptions): KeyEncryptionKeys & { close(): void } {
  const prefix = `${options.aliasPrefix.replace(/\/+$/, '')}/epoch-`;
  if (!prefix.startsWith('alias/')) throw new Error('the KMS alias prefix must start with alias/');
  // The SDK is loaded on first use: processes whose KEKs are elsewhere never pay for it.
  type Sdk = typeof KmsSdk;
  let opened: Promise<{ sdk: Sdk; client: KMSClient }> | null = null;
  const open = () =>
    (opened ??= import('@aws-sdk/client-kms').then((sdk) => ({
      sdk,
      client: new sdk.KMSClient({
        region: options.region,
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
      }),
    })));
  const listTtlMs = options.listTtlMs ?? 1_000;
  let listed: { at: number; keys: EpochKey[] } | null = null;

  const list = async (fresh = false): Promise<EpochKey[]> => {
    if (!fresh && listed && Date.now() - listed.at < listTtlMs) return listed.keys;
    const { sdk, client } = await open();
    const found: { epoch: number; keyId: string }[] = [];
    let marker: string | undefined;
    do {
      const page = await client.send(new sdk.ListAliasesCommand({ Limit: 100, ...(marker ? { Marker: marker } : {}) }));
      for (const alias of page.Aliases ?? []) {
        if (!alias.AliasName?.startsWith(prefix) || !alias.TargetKeyId) continue;
        const epoch = Number(alias.AliasName.slice(prefix.length));
        if (Number.isSafeInteger(epoch) && epoch > 0) found.push({ epoch, keyId: alias.TargetKeyId });
      }
      marker = page.Truncated ? page.NextMarker : undefined;
    } while (marker);
    const keys = await Promise.all(
      found.map(async ({ epoch, keyId }) => {
        const described = await client.send(new sdk.DescribeKeyCommand({ KeyId: keyId }));
        return { epoch, keyId, meta: described.KeyMetadata! };
      }),
    );
    keys.sort((a, b) => a.epoch - b.epoch);
    listed = { at: Date.now(), keys };
    return keys;
  };
  const live = (k: EpochKey) => k.meta.KeyState === 'Enabled';
  const current = async (fresh = false): Promise<EpochKey> => {
    let keys = await list(fresh);
    if (keys.length === 0 && options.createFirstEpoch) {
      await newEpochKey(1);
      keys = await list(true);
    }
    const last = keys[keys.length - 1];
    if (!last) throw new Error(`no KEK epoch in the KMS under ${prefix}* (make the first with lethe keys init)`);
    if (!live(last)) throw new Error(`the newest KEK epoch (${last.epoch}) is not enabled in the KMS`);
    return last;
  };
  const byEpoch = async (epoch: number): Promise<EpochKey | undefined> => {
    const hit = (await list()).find((k) => k.epoch === epoch);
    return hit ?? (await list(true)).find((k) => k.epoch === epoch);
  };
  const encryptionContext = (context: string) => ({ [CONTEXT_FIELD]: context });

  const newEpochKey = async (epoch: number): Promise<number> => {
    const { sdk, client } = await open();
    const created = await client.send(
      new sdk.CreateKeyCommand({
        KeySpec: 'SYMMETRIC_DEFAULT',
        KeyUsage: 'ENCRYPT_DECRYPT',
        Description: `Lethe key-encryption key, epoch ${epoch}`,
      }),
    );
    const keyId = created.KeyMetadata!.KeyId!;
    try {
      await client.send(new sdk.CreateAliasCommand({ AliasName: `${prefix}${epoch}`, TargetKeyId: keyId }));
    } catch (error) {
      // Another process began this epoch first: its key is the epoch; ours is disabled and scheduled for deletion.
      await client.send(new sdk.DisableKeyCommand({ KeyId: keyId })).catch(() => undefined);
      await client
        .send(new sdk.ScheduleKeyDeletionCommand({ KeyId: keyId, PendingWindowInDays: options.deletionWindowDays }))
        .catch(() => undefined);
      if ((error as { name?: string }).name !== 'AlreadyExistsException') throw error;
    }
    listed = null;
    return epoch;
  };

  return {
    kind: 'aws-kms',
    async wrap(dataKey, context) {
      const { sdk, client } = await open();
      const send = async (key: EpochKey) =>
        client.send(
          new sdk.EncryptCommand({
            KeyId: key.keyId,
            Plaintext: dataKey,
            EncryptionContext: encryptionContext(context),
          }),
        );
      let key = await current();
      let out;
      try {
        out = await send(key);
      } catch (error) {
        // The epoch listed as current was destroyed since it was read: read the list again, once.
        if (!keyIsGone(error)) throw error;
        key = await current(true);
        out = await send(key);
      }
      return { epoch: key.epoch, wrapped: Buffer.from(out.CiphertextBlob!).toString('base64url') };
    },
    async unwrap(epoch, wrapped, context) {
      const key = await byEpoch(epoch);
      if (!key) throw new KekEpochGone(epoch);
      try {
        const { sdk, client } = await open();
        const out = await client.send(
          new sdk.DecryptCommand({
            KeyId: key.keyId,
            CiphertextBlob: Buffer.from(wrapped, 'base64url'),
            EncryptionContext: encryptionContext(context),
          }),
        );
        return Buffer.from(out.Plaintext!);
      } catch (error) {
        if (keyIsGone(error)) {
          listed = null;
          throw new KekEpochGone(epoch);
        }
        throw error;
      }
    },
    async epochs(): Promise<KekEpoch[]> {
      const keys = await list(true);
      return Promise.all(
        keys.map(async (k) => {
          let destroyedAt: Date | null = null;
          if (!live(k)) {
            const { sdk, client } = await open();
            const tags = await client.send(new sdk.ListResourceTagsCommand({ KeyId: k.keyId }));
            const tagged = tags.Tags?.find((t) => t.TagKey === DESTROYED_TAG)?.TagValue;
            // A key disabled outside Lethe unwraps nothing either: it counts as destroyed from when it was seen so.
            destroyedAt = tagged ? new Date(tagged) : (k.meta.DeletionDate ?? new Date());
          }
          return {
            epoch: k.epoch,
            createdAt: k.meta.CreationDate ?? new Date(0),
            destroyedAt,
            ...(k.meta.DeletionDate ? { materialDeletedBy: k.meta.DeletionDate } : {}),
          };
        }),
      );
    },
    async beginEpoch() {
      const keys = await list(true);
      return newEpochKey((keys[keys.length - 1]?.epoch ?? 0) + 1);
    },
    async destroyEpoch(epoch) {
      const keys = await list(true);
      if (keys[keys.length - 1]?.epoch === epoch) throw new Error(`epoch ${epoch} is current: begin another first`);
      const key = keys.find((k) => k.epoch === epoch);
      if (!key || key.meta.KeyState === 'PendingDeletion') return;
      const { sdk, client } = await open();
      if (key.meta.KeyState === 'Enabled')
        await client.send(
          new sdk.TagResourceCommand({
            KeyId: key.keyId,
            Tags: [{ TagKey: DESTROYED_TAG, TagValue: new Date().toISOString() }],
          }),
        );
      await client.send(new sdk.DisableKeyCommand({ KeyId: key.keyId }));
      await client.send(
        new sdk.ScheduleKeyDeletionCommand({ KeyId: key.keyId, PendingWindowInDays: options.deletionWindowDays }),
      );
      listed = null;
    },
    close() {
      void opened?.then(({ client }) => client.destroy());
    },
  };
}

/** Makes the first epoch when the KMS holds none under the prefix; returns whether it did. */
export async function ensureFirstKmsEpoch(keks: KeyEncryptionKeys): Promise<boolean> {
  if ((await keks.epochs()).length > 0) return false;
  await keks.beginEpoch();
  return true;
}
