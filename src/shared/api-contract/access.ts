/**
 * What the access routes answer for a request, as the API sends it: the presenter is typed by this shape, and the
 * rights console and the CLI read it from here. Ids, the selector's kind and keyed hash, counts and dates; never the
 * subject.
 */
export interface AccessRequestView {
  id: string;
  state: string;
  selectorKind: string;
  selectorHash: string;
  requester: string;
  receivedAt: string;
  dueAt: string;
  counts: Record<string, number>;
  /** SHA-256 of the signed package, once built. */
  packageSha256: string | null;
  readyAt: string | null;
  /** When the package is erased; after it, it can no longer be downloaded. */
  expiresAt: string | null;
  downloads: number;
}
