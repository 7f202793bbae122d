/** The selector builder's fields, and their validation — each message names the field it is about. */
export type SelectorKind = 'subjectId' | 'memoryIds' | 'validTime' | 'transactionTime' | 'contentFingerprint';

export interface FilingFields {
  kind: SelectorKind;
  subjectId: string;
  memoryIds: string;
  from: string;
  to: string;
  contentFingerprint: string;
  legalGround: string;
}

export const SELECTOR_KINDS: Record<SelectorKind, string> = {
  subjectId: 'Data subject',
  memoryIds: 'Memory ids',
  validTime: 'Valid-time range',
  transactionTime: 'Recorded-time range',
  contentFingerprint: 'Content fingerprint',
};

export type FieldErrors = Partial<Record<keyof FilingFields, string>>;

/** `datetime-local` values are read as UTC, as the form says. */
function instant(local: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(local)) return null;
  const iso = `${local.length === 16 ? `${local}:00` : local}Z`;
  return Number.isNaN(Date.parse(iso)) ? null : iso;
}

export function splitIds(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The filing body, or the errors by field. */
export function buildFiling(f: FilingFields): { body: object } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  let selector: object | null = null;
  if (f.kind === 'subjectId') {
    if (!f.subjectId.trim()) errors.subjectId = 'Subject id: required';
    else if (f.subjectId.trim().length > 256) errors.subjectId = 'Subject id: at most 256 characters';
    else selector = { subjectId: f.subjectId.trim() };
  } else if (f.kind === 'memoryIds') {
    const ids = splitIds(f.memoryIds);
    if (ids.length === 0) errors.memoryIds = 'Memory ids: name at least one memory id';
    else if (ids.some((id) => id.length > 256)) errors.memoryIds = 'Memory ids: each id is at most 256 characters';
    else selector = { memoryIds: ids };
  } else if (f.kind === 'validTime' || f.kind === 'transactionTime') {
    const from = instant(f.from);
    const to = instant(f.to);
    if (!from) errors.from = 'From: a date and time is required';
    if (!to) errors.to = 'To: a date and time is required';
    if (from && to && Date.parse(from) >= Date.parse(to)) errors.to = 'To: must be after From';
    if (from && to && !errors.to) selector = { [f.kind]: { from, to } };
  } else {
    const digest = f.contentFingerprint.trim().toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(digest))
      errors.contentFingerprint = 'Content fingerprint: a SHA-256 hex digest (64 hexadecimal digits)';
    else selector = { contentFingerprint: digest };
  }
  if (!f.legalGround) errors.legalGround = 'Legal ground: choose the ground of the request';
  if (Object.keys(errors).length > 0 || !selector) return { errors };
  return { body: { selector, legalGround: f.legalGround } };
}

/** The form field an API error's `field` (e.g. `selector.subjectId`) points at. */
export function formFieldOf(apiField: string | null, kind: SelectorKind): keyof FilingFields | null {
  if (!apiField) return null;
  if (apiField.startsWith('legalGround')) return 'legalGround';
  if (apiField.endsWith('.to')) return 'to';
  if (apiField.endsWith('.from')) return 'from';
  if (apiField.startsWith('selector')) return kind === 'validTime' || kind === 'transactionTime' ? 'from' : kind;
  return null;
}
