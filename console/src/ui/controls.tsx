import type { ComponentChildren } from 'preact';
import { explain } from '../api.js';

/** A labelled control with its error beneath it, tied together for screen readers. */
export function Field(props: {
  id: string;
  label: string;
  error?: string | undefined;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    <div class={`field${props.error ? ' invalid' : ''}`}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p class="field-error" id={`${props.id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

/** aria attributes for a control of a Field. */
export function described(id: string, error: string | undefined, hint = false) {
  const by = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return { id, 'aria-invalid': error ? ('true' as const) : undefined, 'aria-describedby': by || undefined };
}

/** A refusal or failure, announced. */
export function ErrorNotice(props: { error: unknown }) {
  if (props.error === null || props.error === undefined) return null;
  return (
    <p class="notice error" role="alert">
      {explain(props.error)}
    </p>
  );
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

export function formatDate(iso: string): string {
  return iso.slice(0, 10);
}

/** Saves text as a file through a Blob link (nothing of it enters a URL that leaves the page). */
export function download(name: string, text: string, type = 'application/json'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
