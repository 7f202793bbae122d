/**
 * The subject page's address names a handle, never the subject: a route holds console names and record ids only
 * (`ui/route.ts`). The handle is mapped to the subject id in this tab's sessionStorage, like the token, so the
 * page survives a reload and the browser's back button but its address, once copied, says nothing about anyone.
 */
const KEY = 'lethe.subjects';

function read(): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(sessionStorage.getItem(KEY) ?? '{}');
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** The handle of this subject in this tab (the same one each time it is opened). */
export function handleOf(subjectId: string): string {
  const handles = read();
  const known = Object.entries(handles).find(([, s]) => s === subjectId)?.[0];
  if (known) return known;
  const handle = `s-${crypto.randomUUID().slice(0, 8)}`;
  sessionStorage.setItem(KEY, JSON.stringify({ ...handles, [handle]: subjectId }));
  return handle;
}

/** The subject a handle stands for in this tab, or null (opened in another tab, or after sign-out). */
export function subjectOf(handle: string): string | null {
  return read()[handle] ?? null;
}
