/**
 * What every part of the memory store shares: the records' and the move guards' collections, the marks laid over
 * the rows, and the cipher that seals and opens their content.
 */
import type { Collection } from 'mongodb';
import type { ContentCipher } from '../crypto/content-cipher.js';
import type { MemoryRecord } from '../model/records.js';
import type { RecordMarks } from '../mongo/record-marks.js';
import type { DeletionMarks, TransitionGuard } from './deletion-marks.js';

/** Built once by `createMongoMemoryStore` and passed to every part. */
export interface MemoryStoreContext {
  readonly memories: Collection<MemoryRecord>;
  readonly guards: Collection<TransitionGuard>;
  readonly marks: DeletionMarks;
  readonly recordMarks: RecordMarks;
  readonly cipher: ContentCipher;
}
