import type { AgentLabel } from '../../modules/agents/agent-labels.js';
import type { AgentSummary } from '../../modules/search/search-schemas.js';
import { html, safeHttpUrl, type Html } from './html.js';

export function agentHref(did: string): string {
  return `/agents/${encodeURIComponent(did)}`;
}

export function formatDate(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** How long ago `epochMs` was, roughly, in the largest whole unit: "40 s", "3 min", "3 h", "2 days". */
export function formatAgo(epochMs: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - epochMs) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  const days = Math.floor(seconds / 86_400);
  return `${days} ${days === 1 ? 'day' : 'days'} ago`;
}

/** An agent's availability in words: "Online now", "Offline, last seen 3 h ago", or "Unknown". */
export function availabilityText(
  availability: { status: string; last_seen_at: number | null },
  now: number,
): string {
  if (availability.status === 'online') return 'Online now';
  const seen =
    availability.last_seen_at === null ? '' : `, last seen ${formatAgo(availability.last_seen_at, now)}`;
  if (availability.status === 'offline') return `Offline${seen}`;
  return `Unknown${seen === '' ? ' (never observed)' : seen}`;
}

export function formatScore(score: number): string {
  return String(Number(score.toFixed(1)));
}

export function copyButton(text: string, label: string): Html {
  return html`<button type="button" class="copy" data-copy="${text}" aria-label="${label}" hidden>
    Copy
  </button>`;
}

export function tagList(tags: string[], label: string): Html {
  if (tags.length === 0) return html``;
  return html`<ul class="tags" aria-label="${label}">
    ${tags.map((tag) => html`<li>${tag}</li>`)}
  </ul>`;
}

/** A rate 0-1 as a whole percentage ("97 %"); one decimal only when it would otherwise read 100 or 0. */
export function formatRate(rate: number): string {
  const percent = rate * 100;
  const whole = Math.round(percent);
  const text = (whole === 100 && rate < 1) || (whole === 0 && rate > 0) ? percent.toFixed(1) : String(whole);
  return `${text} %`;
}

/** Where a remote entry comes from and how far it was verified, in words. */
export function provenanceText(provenance: AgentSummary['provenance']): string {
  if (provenance.kind === 'mirrored') {
    const state =
      provenance.state === 'unverified' ? 'no longer verified' : "verified against its registry's log";
    return `Mirrored from ${provenance.home_registry} (${state})`;
  }
  if (provenance.kind === 'imported') {
    const how = provenance.format === 'mcp-registry' ? 'MCP Registry' : 'A2A agent card';
    const state =
      provenance.verification === 'verified'
        ? `signature verified, ${provenance.did ?? ''}`.replace(/, $/, '')
        : (provenance.verification ?? 'unsigned').replace('-', ', ');
    return `Imported from ${provenance.source_url ?? provenance.home_registry} (${how}; ${state})`;
  }
  return `Registered at ${provenance.home_registry}`;
}

/** What this registry's probes found of an imported entry, in words. */
export function observedLine(observed: NonNullable<AgentSummary['observed']>): string {
  const status = {
    answers: 'answers',
    needs_auth: 'asks for authentication',
    not_mcp: 'answers HTTP, but not MCP',
    not_a2a: 'answers HTTP, but not A2A',
    unreachable: 'unreachable',
  }[observed.status];
  const tools =
    observed.tools_count === null || observed.tools_digest === null
      ? ''
      : `; ${observed.tools_count} tools, ${observed.tools_digest.slice(0, 'sha256:'.length + 12)}…`;
  return `Probed ${formatDate(observed.checked_at)}: ${status}${tools}`;
}

/** A mirrored agent's figures as its home registry's log carries them, labelled as the home's. */
export function homeLine(home: NonNullable<AgentSummary['home']>): string {
  const reviews =
    home.total_reviews === 0
      ? 'no reviews'
      : `rated ${home.average_rating.toFixed(1)}/10 by ${home.total_reviews} review${home.total_reviews === 1 ? '' : 's'}`;
  const live =
    home.availability === undefined || home.checked_at === undefined
      ? ''
      : `; ${home.availability.status === 'unknown' ? 'availability unknown' : home.availability.status} there when read ${formatDate(home.checked_at)}` +
        (home.service_record?.success_rate_30d == null
          ? ''
          : `, ${formatRate(home.service_record.success_rate_30d)} of ${home.service_record.invocations_30d} calls succeeded in 30 days`);
  return `At its home registry: reputation ${formatScore(home.reputation_score)}/100, ${reviews} (read ${formatDate(home.read_at)})${live}`;
}

/** `label` carries the 30-day success rate (read for the whole page at once); absent, none is shown. */
export function agentSummaryCard(
  agent: AgentSummary,
  label: AgentLabel | undefined,
  availability?: string,
): Html {
  const successRate = label?.successRate ?? null;
  const types = [...new Set(agent.capabilities.map((capability) => capability.type))];
  const remote = agent.provenance.kind !== 'registered';
  // A remote entry's page is at its home: this registry holds no profile, reviews or record of it. A
  // mirrored agent's home is a registry like this one, whose page of the agent is at the same path; an
  // imported one is described where it was read (its agent card, its MCP Registry entry), not by its
  // host's root, which may serve many agents or none.
  const href =
    agent.provenance.kind === 'mirrored'
      ? `${agent.home_registry}${agentHref(agent.did)}`
      : remote
        ? (safeHttpUrl(agent.provenance.source_url) ?? agent.home_registry)
        : agentHref(agent.did);
  return html`<li class="card">
    <article aria-labelledby="card-${agent.did}">
      <h3 id="card-${agent.did}"><a href="${href}">${agent.name}</a></h3>
      ${remote ? html`<p class="provenance">${provenanceText(agent.provenance)}</p>` : ''}
      ${agent.observed === undefined ? '' : html`<p class="provenance">${observedLine(agent.observed)}</p>`}
      ${agent.home === undefined ? '' : html`<p class="provenance">${homeLine(agent.home)}</p>`}
      ${agent.description === null ? '' : html`<p class="description">${agent.description}</p>`}
      ${tagList(types, 'Capabilities')}
      ${agent.tags.length === 0 ? '' : html`<p class="card-tags">Tags: ${agent.tags.join(', ')}</p>`}
      ${agent.domains === undefined ? '' : html`<p class="card-domains">Verified domains: ${agent.domains.join(', ')}</p>`}
      <p class="meta">
        ${
          agent.total_reviews === 0
            ? html`<span class="score" title="No reviews yet, so no score (the API reads 0)"
                >Reputation <strong>unrated</strong></span
              >`
            : html`<span class="score" title="Reputation score out of 100"
                >Reputation <strong>${formatScore(agent.reputation_score)}</strong>/100</span
              >`
        }
        ${
          agent.total_reviews === 0
            ? html`<span>No reviews</span>`
            : html`<span title="Plain mean of the ratings, 1 to 10"
                >Rated <strong>${agent.average_rating.toFixed(1)}</strong>/10 by ${agent.total_reviews}</span
              >`
        }
        ${
          successRate === null
            ? html`<span title="No brokered call in the last 30 days">No calls in 30 days</span>`
            : html`<span title="Brokered calls that succeeded in the last 30 days"
                >Success <strong>${formatRate(successRate)}</strong></span
              >`
        }
        ${availability === undefined ? '' : html`<span class="availability">${availability}</span>`}
      </p>
    </article>
  </li>`;
}

export interface PagerOptions {
  label: string;
  total: number;
  limit: number;
  offset: number;
  href(offset: number): string;
}

export function pager({ label, total, limit, offset, href }: PagerOptions): Html {
  if (total <= limit && offset === 0) return html``;
  const first = total === 0 ? 0 : offset + 1;
  const last = Math.min(total, offset + limit);
  const previous = offset > 0 ? Math.max(0, offset - limit) : undefined;
  const next = offset + limit < total ? offset + limit : undefined;
  return html`<nav class="pager" aria-label="${label}">
    ${previous === undefined ? html`<span class="pager-disabled" aria-hidden="true">← Previous</span>` : html`<a href="${href(previous)}" rel="prev">← Previous</a>`}
    <span>${first}–${last} of ${total}</span>
    ${next === undefined ? html`<span class="pager-disabled" aria-hidden="true">Next →</span>` : html`<a href="${href(next)}" rel="next">Next →</a>`}
  </nav>`;
}
