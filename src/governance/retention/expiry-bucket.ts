/**
 * Expiry buckets: the UTC hour of a record's `expiresAt` as `YYYY-MM-DDTHH`, stored on the record as
 * `expiryBucket`. On FerretDB a range filter is never pushed down (every page of a `expiresAt <= now` query reads
 * the whole tenant), while equality on an indexed field is; so the sweep asks for one hour at a time, by equality.
 * The field is also the record's place in the retention queue: an hour bucket while it waits to expire,
 * `ERASURE_PENDING` once expired and waiting to be handed to erasure, `null` once handed (or never expiring).
 */

/** The queue slot of records that expired and wait for their erasure to be filed. */
export const ERASURE_PENDING = 'erasure-pending';

const HOUR = 60 * 60 * 1000;
const BUCKET = /^\d{4}-\d{2}-\d{2}T\d{2}$/;

export function isExpiryBucket(value: string): boolean {
  return BUCKET.test(value) && !Number.isNaN(bucketStart(value).getTime());
}

export function expiryBucketOf(at: Date): string {
  return at.toISOString().slice(0, 13);
}

/** The first instant of a bucket. */
export function bucketStart(bucket: string): Date {
  return new Date(`${bucket}:00:00.000Z`);
}

/** The bucket `hours` after (or before, if negative) this one. */
export function addBuckets(bucket: string, hours: number): string {
  return expiryBucketOf(new Date(bucketStart(bucket).getTime() + hours * HOUR));
}
