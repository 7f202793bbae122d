import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Session } from '../session.js';
import { ErrorNotice, formatDate, formatTime } from '../ui/controls.js';
import { downloadAccessPackage } from '../rights/access-requests.js';
import { LiftRestriction } from '../rights/restriction-form.js';
import type { SubjectRequests } from './subject-requests-types.js';

interface Row {
  kind: string;
  id: string;
  state: string;
  due: string;
  filed: string;
  action?: ComponentChildren;
  link?: string;
}

/** Every request about the subject, of every kind, newest first: what it is, where it stands, when it is due. */
export function SubjectRequestTable(props: { session: Session; requests: SubjectRequests; onChanged: () => void }) {
  const { requests, session } = props;
  const [failure, setFailure] = useState<unknown>(null);
  const fetchPackage = async (id: string) => {
    setFailure(null);
    try {
      await downloadAccessPackage(session, id);
      props.onChanged();
    } catch (e) {
      setFailure(e);
    }
  };
  const rows: Row[] = [
    ...(requests.erasure ?? []).map((r) => ({
      kind: 'Erasure',
      id: r.id,
      state: r.state,
      due: `${formatDate(r.dueAt)}${r.overdue ? ' (overdue)' : ''}`,
      filed: r.receivedAt,
      link: `#/dpo/requests/${encodeURIComponent(r.id)}`,
    })),
    ...(requests.access ?? []).map((r) => ({
      kind: 'Access',
      id: r.id,
      state: r.state,
      due: formatDate(r.dueAt),
      filed: r.receivedAt,
      action:
        r.state === 'ready' && requests.may.access ? (
          <button type="button" class="secondary" onClick={() => void fetchPackage(r.id)}>
            Download package {r.id}
          </button>
        ) : undefined,
    })),
    ...(requests.rectification ?? []).map((r) => ({
      kind: 'Correction',
      id: r.id,
      state: r.state,
      due: formatDate(r.dueAt),
      filed: r.receivedAt,
      action: r.correctedId ? `now ${r.correctedId}${r.decidedBy ? `, decided by ${r.decidedBy}` : ''}` : undefined,
    })),
    ...(requests.restrictions ?? []).map((r) => ({
      kind: r.kind === 'restriction' ? 'Restriction' : `Objection (${(r.purposes ?? []).join(', ')})`,
      id: r.id,
      state: r.active ? 'in force' : `lifted ${formatTime(r.liftedAt)}`,
      // A restriction has no deadline: it is in force from its filing until it is lifted.
      due: 'in force from filing',
      filed: r.filedAt,
      action:
        r.active && requests.may.lift ? (
          <LiftRestriction session={session} restriction={r} onLifted={props.onChanged} />
        ) : undefined,
    })),
  ].sort((a, b) => b.filed.localeCompare(a.filed));
  const unread = (
    [
      ['erasure', 'erasure'],
      ['access', 'access'],
      ['rectification', 'correction'],
      ['restrictions', 'restriction and objection'],
    ] as const
  ).filter(([k]) => requests[k] === null);
  return (
    <>
      <ErrorNotice error={failure} />
      <table data-testid="subject-requests">
        <caption>Requests about this subject, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Right</th>
            <th scope="col">Request</th>
            <th scope="col">State</th>
            <th scope="col">Due</th>
            <th scope="col">Filed</th>
            <th scope="col">Action or outcome</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={6}>No request about this subject yet.</td>
            </tr>
          )}
          {rows.map((r) => (
            <tr key={r.id} data-subject-request={r.id} data-kind={r.kind.split(' ')[0]!.toLowerCase()}>
              <td>{r.kind}</td>
              <td>{r.link ? <a href={r.link}>{r.id}</a> : r.id}</td>
              <td data-testid="subject-request-state">{r.state}</td>
              <td>{r.due}</td>
              <td>{formatTime(r.filed)}</td>
              <td>{r.action ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {unread.length > 0 && (
        <p class="hint">This token may not read {unread.map(([, label]) => label).join(', ')} requests.</p>
      )}
    </>
  );
}
