import type * as KmsSdk from '@aws-sdk/client-kms';
import type { KMSClient, KeyMetadata } from '@aws-sdk/client-kms';
import { KekEpochGone, KekUnavailable, type KekEpoch, type KeyEncryptionKeys } from './key-encryption-keys.port.js';

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
  /**
   * How long one attempt may wait for a connection and for the answer, in ms. The SDK waits forever by default: a KMS
   * that accepts and never answers would hold every write and cold read with it.
   */
  timeouts?: { connectMs: number; requestMs: number };
  /** Attempts per call, the SDK's own retries with backoff included (throttling, 5xx, network). */
  maxAttempts?: number;
}

/** Bounds that keep a write waiting on a silent KMS for seconds, not for ever. */
export const DEFAULT_KMS_TIMEOUTS = { connectMs: 2_000, requestMs: 5_000 };

interface EpochKey {
  epoch: number;
  keyId: string;
  meta: KeyMetadata;
}

const CONTEXT_FIELD = 'lethe:context';
const DESTROYED_TAG = 'lethe:destroyed-at';

/** Refusals of a KMS that is there but cannot serve now: throttled, or failing on its side. */
const TRANSIENT_NAMES = new Set([
  'ThrottlingException',
  'LimitExceededException',
  'KMSInternalException',
  'DependencyTimeoutException',
  'ServiceUnavailableException',
  'InternalFailure',
  'TimeoutError',
  'RequestTimeout',
]);
/** Network failures of a KMS that is not there, or not answering. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The KMS call's failure as `KekUnavailable` when waiting could change it; otherwise null (a real refusal). */
export function kmsUnavailability(error: unknown): KekUnavailable | null {
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (e.code && NETWORK_CODES.has(e.code)) return new KekUnavailable('aws-kms', e.code);
  if (e.name && TRANSIENT_NAMES.has(e.name)) return new KekUnavailable('aws-kms', e.name);
  if (status !== undefined && status >= 500) return new KekUnavailable('aws-kms', `HTTP ${status}`);
  return null;
}

/** A KMS refusal that means the key cannot unwrap any more (disabled, pending deletion, deleted). */
function keyIsGone(error: unknown): boolean {
  const name = (error as { name?: string }).name;
  return name === 'DisabledException' || name === 'KMSInvalidStateException' || name === 'NotFoundException';
}

export function createAwsKmsKeks(options: AwsKmsKekOptions): KeyEncryptionKeys & { close(): void } {
  const prefix = `${options.aliasPrefix.replace(/(?<!\/)\/+$/, '')}/epoch-`;
  if (!prefix.startsWith('alias/')) throw new Error('the KMS alias prefix must start with alias/');
  // The SDK is loaded on first use: processes whose KEKs are elsewhere never pay for it.
  type Sdk = typeof KmsSdk;
  type Send = KMSClient['send'];
  let opened: Promise<{ sdk: Sdk; client: KMSClient; send: Send }> | null = null;
  const timeouts = options.timeouts ?? DEFAULT_KMS_TIMEOUTS;
  const open = () =>
    (opened ??= import('@aws-sdk/client-kms').then((sdk) => {
      const client = new sdk.KMSClient({
        region: options.region,
        maxAttempts: options.maxAttempts ?? 3,
        // Without throwOnRequestTimeout the SDK only logs a request past its timeout, and goes on waiting.
        requestHandler: {
          connectionTimeout: timeouts.connectMs,
          requestTimeout: timeouts.requestMs,
          throwOnRequestTimeout: true,
        },
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
      });
      // Every call: a KMS that cannot answer now is `KekUnavailable` (503 to an API caller, retried by activities).
      const send = ((command: Parameters<Send>[0]) =>
        client.send(command).catch((error: unknown) => {
          throw kmsUnavailability(error) ?? error;
        })) as Send;
      return { sdk, client, send };
    }));
  const listTtlMs = options.listTtlMs ?? 1_000;
  let listed: { at: number; keys: EpochKey[] } | null = null;

  const list = async (fresh = false): Promise<EpochKey[]> => {
    if (!fresh && listed && Date.now() - listed.at < listTtlMs) return listed.keys;
    const { sdk, send } = await open();
    const found: { epoch: number; keyId: string }[] = [];
    let marker: string | undefined;
    do {
      const page = await send(new sdk.ListAliasesCommand({ Limit: 100, ...(marker ? { Marker: marker } : {}) }));
      for (const alias of page.Aliases ?? []) {
        if (!alias.AliasName?.startsWith(prefix) || !alias.TargetKeyId) continue;
        const epoch = Number(alias.AliasName.slice(prefix.length));
        if (Number.isSafeInteger(epoch) && epoch > 0) found.push({ epoch, keyId: alias.TargetKeyId });
      }
      marker = page.Truncated ? page.NextMarker : undefined;
    } while (marker);
    const keys = await Promise.all(
      found.map(async ({ epoch, keyId }) => {
        const described = await send(new sdk.DescribeKeyCommand({ KeyId: keyId }));
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
    const { sdk, send } = await open();
    const created = await send(
      new sdk.CreateKeyCommand({
        KeySpec: 'SYMMETRIC_DEFAULT',
        KeyUsage: 'ENCRYPT_DECRYPT',
        Description: `Lethe key-encryption key, epoch ${epoch}`,
      }),
    );
    const keyId = created.KeyMetadata!.KeyId!;
    try {
      await send(new sdk.CreateAliasCommand({ AliasName: `${prefix}${epoch}`, TargetKeyId: keyId }));
    } catch (error) {
      // Another process began this epoch first: its key is the epoch; ours is disabled and scheduled for deletion.
      await send(new sdk.DisableKeyCommand({ KeyId: keyId })).catch(() => undefined);
      await send(
        new sdk.ScheduleKeyDeletionCommand({ KeyId: keyId, PendingWindowInDays: options.deletionWindowDays }),
      ).catch(() => undefined);
      if ((error as { name?: string }).name !== 'AlreadyExistsException') throw error;
    }
    listed = null;
    return epoch;
  };

  return {
    kind: 'aws-kms',
    async wrap(dataKey, context) {
      const { sdk, send } = await open();
      const encrypt = async (key: EpochKey) =>
        send(
          new sdk.EncryptCommand({
            KeyId: key.keyId,
            Plaintext: dataKey,
            EncryptionContext: encryptionContext(context),
          }),
        );
      let key = await current();
      let out;
      try {
        out = await encrypt(key);
      } catch (error) {
        // The epoch listed as current was destroyed since it was read: read the list again, once.
        if (!keyIsGone(error)) throw error;
        key = await current(true);
        out = await encrypt(key);
      }
      return { epoch: key.epoch, wrapped: Buffer.from(out.CiphertextBlob!).toString('base64url') };
    },
    async unwrap(epoch, wrapped, context) {
      const key = await byEpoch(epoch);
      if (!key) throw new KekEpochGone(epoch);
      try {
        const { sdk, send } = await open();
        const out = await send(
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
            const { sdk, send } = await open();
            const tags = await send(new sdk.ListResourceTagsCommand({ KeyId: k.keyId }));
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
      const { sdk, send } = await open();
      if (key.meta.KeyState === 'Enabled')
        await send(
          new sdk.TagResourceCommand({
            KeyId: key.keyId,
            Tags: [{ TagKey: DESTROYED_TAG, TagValue: new Date().toISOString() }],
          }),
        );
      await send(new sdk.DisableKeyCommand({ KeyId: key.keyId }));
      await send(
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
