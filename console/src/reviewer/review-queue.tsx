import { useState } from 'preact/hooks';
import { getJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, Field, formatTime } from '../ui/controls.js';
import type { QueueItem } from './review-types.js';
import { usePolling } from '../ui/polling.js';

/** Sign-offs and disputes waiting, oldest first, filtered by type, namespace, kind and age. */
export function ReviewQueue(props: { session: Session }) {
  const [type, setType] = useState('');
  const [namespace, setNamespace] = useState('');
  const [kind, setKind] = useState('');
  const [olderThanHours, setOlder] = useState('');
  const { data: items, error } = usePolling(
    () =>
      getJson<{ items: QueueItem[] }>(props.session, '/review-queue', { type, namespace, kind, olderThanHours }).then(
        (r) => [...r.items].sort((a, b) => a.recordedAt.localeCompare(b.recordedAt)),
      ),
    4000,
    [props.session, type, namespace, kind, olderThanHours],
  );
  return (
    <section aria-labelledby="queue-heading">
      <h2 id="queue-heading">Review queue</h2>
      <form class="row" onSubmit={(e) => e.preventDefault()} aria-label="Filter the queue">
        <Field id="q-type" label="Type">
          <select id="q-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            <option value="">All</option>
            <option value="sign-off">Sign-offs</option>
            <option value="dispute">Disputes</option>
          </select>
        </Field>
        <Field id="q-namespace" label="Namespace">
          <input id="q-namespace" value={namespace} onChange={(e) => setNamespace(e.currentTarget.value)} />
        </Field>
        <Field id="q-kind" label="Memory kind">
          <input id="q-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)} />
        </Field>
        <Field id="q-age" label="Waiting at least (hours)">
          <input
            id="q-age"
            type="number"
            min={0}
            value={olderThanHours}
            onChange={(e) => setOlder(e.currentTarget.value)}
          />
        </Field>
      </form>
      <ErrorNotice error={error} />
      {items && items.length === 0 && <p>Nothing waits for review.</p>}
      {items && items.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Item</th>
              <th scope="col">Type</th>
              <th scope="col">Namespace</th>
              <th scope="col">Kind</th>
              <th scope="col">Waiting since</th>
              <th scope="col">Written by</th>
            </tr>
          </thead>
          <tbody>
            {items.map((i) => (
              <tr key={i.id} data-item={i.id}>
                <td>
                  <a href={`#/review/${i.type === 'dispute' ? 'disputes' : 'sign-offs'}/${encodeURIComponent(i.id)}`}>
                    {i.id}
                  </a>
                </td>
                <td>{i.type}</td>
                <td>{i.namespace}</td>
                <td>{i.kind ?? '—'}</td>
                <td>{formatTime(i.recordedAt)}</td>
                <td>{i.writtenBy}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
