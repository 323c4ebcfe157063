import type { AgentProfile } from '../../../modules/agents/schemas.js';
import { formatDate } from '../components.js';
import { html, type Html } from '../html.js';

export function percent(rate: number | null): string {
  return rate === null ? '-' : `${(rate * 100).toFixed(1)} %`;
}

function milliseconds(value: number | null): string {
  return value === null ? '-' : `${Math.round(value)} ms`;
}

/** What the registry measured of the calls it brokered to this agent (docs/service-record.md). */
export function serviceRecordSection(profile: AgentProfile): Html {
  const record = profile.service_record;
  const windows = [
    ['Last 7 days', record.last_7_days],
    ['Last 30 days', record.last_30_days],
  ] as const;
  // On a phone each window stacks as a card of labelled values (site.css reads data-label).
  const table = html`<div class="table-scroll" tabindex="0">
    <table class="stack-narrow">
      <caption class="muted">
        Brokered calls; the agent's own calls and those of identities linked to it do not count.
      </caption>
      <thead>
        <tr>
          <th scope="col">Window</th>
          <th scope="col">Calls</th>
          <th scope="col">Success rate</th>
          <th scope="col">Timeouts</th>
          <th scope="col">Latency p50 / p95</th>
          <th scope="col">Distinct callers</th>
          <th scope="col">Last completed call</th>
        </tr>
      </thead>
      <tbody>
        ${windows.map(
          ([label, window]) =>
            html`<tr>
              <th scope="row">${label}</th>
              <td data-label="Calls">${window.invocations}</td>
              <td data-label="Success rate">${percent(window.success_rate)}</td>
              <td data-label="Timeouts">${percent(window.timeout_rate)}</td>
              <td data-label="Latency p50 / p95">
                ${milliseconds(window.latency_p50_ms)} / ${milliseconds(window.latency_p95_ms)}
              </td>
              <td data-label="Distinct callers">${window.distinct_callers}</td>
              <td data-label="Last completed call">
                ${window.last_completed_at === null ? '-' : formatDate(window.last_completed_at)}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
  return html`<section aria-labelledby="service-title" class="panel">
    <h2 id="service-title">Service record</h2>
    ${
      record.all_time.invocations === 0
        ? html`<p class="muted">No brokered calls yet.</p>`
        : html`<p>
            ${record.all_time.invocations} brokered
            ${record.all_time.invocations === 1 ? 'call' : 'calls'} in all, success rate
            ${percent(record.all_time.success_rate)}.
          </p>
          ${table}`
    }
  </section>`;
}

/**
 * Why the score reads what it does, from the numbers on the page: most surprising is a score far
 * from what the ratings suggest, because young or little-used reviewers weigh little.
 */
