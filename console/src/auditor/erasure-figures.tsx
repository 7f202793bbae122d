import { getJson } from '../api.js';
import type { Session } from '../session.js';
import type { ErasureSummary } from '../dpo/erasure-types.js';
import { ErrorNotice } from '../ui/controls.js';
import { usePolling } from '../ui/polling.js';
import { erasureStats } from './erasure-stats.js';

const WIDTH = 480;
const HEIGHT = 140;

/** Erasures per week as an SVG bar chart (attributes only: the CSP allows no inline styles), with a table twin. */
export function ErasureFigures(props: { session: Session }) {
  const { data, error } = usePolling(
    () => getJson<{ items: ErasureSummary[] }>(props.session, '/erasure-requests', { limit: 500 }).then((r) => r.items),
    15_000,
    [props.session],
  );
  if (error) return <ErrorNotice error={error} />;
  if (!data) return null;
  const stats = erasureStats(data, Date.now());
  const max = Math.max(1, ...stats.perWeek.map((w) => w.count));
  const bar = WIDTH / stats.perWeek.length;
  // Erasures close in minutes here and in weeks under a hold: say each in its own unit.
  const days = (d: number | null) =>
    d === null
      ? '—'
      : d < 1 / 24
        ? `${(d * 1440).toFixed(1)} min`
        : d < 1
          ? `${(d * 24).toFixed(1)} h`
          : `${d.toFixed(1)} days`;
  return (
    <section aria-labelledby="figures-heading">
      <h2 id="figures-heading">Erasures at a glance</h2>
      <dl class="facts" data-testid="erasure-figures">
        <dt>Median time to close</dt>
        <dd>{days(stats.medianDaysToClose)}</dd>
        <dt>95th percentile</dt>
        <dd>{days(stats.p95DaysToClose)}</dd>
        <dt>Overdue now</dt>
        <dd>{stats.overdue}</dd>
        <dt>Open</dt>
        <dd>{stats.open}</dd>
      </dl>
      <figure>
        <svg
          role="img"
          aria-labelledby="per-week-caption"
          viewBox={`0 0 ${WIDTH} ${HEIGHT + 20}`}
          width={WIDTH}
          height={HEIGHT + 20}
        >
          {stats.perWeek.map((w, i) => {
            const h = (w.count / max) * HEIGHT;
            return (
              <g key={w.week}>
                <rect x={i * bar + 4} y={HEIGHT - h} width={bar - 8} height={h} fill="#0b5cad" />
                <text x={i * bar + bar / 2} y={HEIGHT + 14} text-anchor="middle" font-size="10" fill="#1b1f24">
                  {w.week.slice(5)}
                </text>
              </g>
            );
          })}
        </svg>
        <figcaption id="per-week-caption">Completed erasures per week of receipt (last 8 weeks, UTC)</figcaption>
      </figure>
      <table class="per-week">
        <caption>Completed erasures per week</caption>
        <thead>
          <tr>
            <th scope="col">Week of</th>
            <th scope="col">Completed</th>
          </tr>
        </thead>
        <tbody>
          {stats.perWeek.map((w) => (
            <tr key={w.week}>
              <td>{w.week}</td>
              <td>{w.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
