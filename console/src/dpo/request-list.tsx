import { getJson } from '../api.js';
import type { Session } from '../session.js';
import { ErrorNotice, formatDate, formatTime } from '../ui/controls.js';
import type { ErasureSummary } from './erasure-types.js';
import { usePolling } from '../ui/polling.js';

/** The DPO's requests, newest first, with the GDPR clock: due date, overdue, extended. */
export function RequestList(props: { session: Session }) {
  const { data, error } = usePolling(
    () => getJson<{ items: ErasureSummary[] }>(props.session, '/erasure-requests').then((r) => r.items),
    5000,
    [props.session],
  );
  const items = data;
  return (
    <section aria-labelledby="list-heading">
      <h2 id="list-heading">Erasure requests</h2>
      <ErrorNotice error={error} />
      {items && items.length === 0 && <p>No requests yet.</p>}
      {items && items.length > 0 && (
        <table class="requests">
          <thead>
            <tr>
              <th scope="col">Request</th>
              <th scope="col">State</th>
              <th scope="col">Selector</th>
              <th scope="col">Received</th>
              <th scope="col">Due (GDPR)</th>
              <th scope="col">Clock</th>
            </tr>
          </thead>
          <tbody>
            {items.map((r) => (
              <tr key={r.id} data-request={r.id}>
                <td>
                  <a href={`#/dpo/requests/${encodeURIComponent(r.id)}`}>{r.id}</a>
                </td>
                <td>
                  <span class={`state state-${r.state}`}>{r.state}</span>
                </td>
                <td>{r.selectorKind}</td>
                <td>{formatTime(r.receivedAt)}</td>
                <td>{formatDate(r.dueAt)}</td>
                <td>
                  {r.overdue && <span class="flag overdue">overdue</span>}
                  {r.extensionMonths > 0 && <span class="flag extended">extended +{r.extensionMonths} mo</span>}
                  {!r.overdue && r.extensionMonths === 0 && '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
