import type { AgentLabel } from '../../../modules/agents/agent-labels.js';
import type { ExtendedStats } from '../../../modules/stats/stats-schemas.js';
import type { SearchResponse } from '../../../modules/search/search-schemas.js';
import { SEARCH_RULES } from '../../../kernel/discovery-rules.js';
import { LIMITS } from '../../../kernel/limits.js';
import { agentSummaryCard, availabilityText, pager } from '../components.js';
import { html, type Html } from '../html.js';

export const PAGE_SIZE = 20;

/** The search form's fields, as typed by the visitor (kept verbatim to refill the form). */
export interface SearchForm {
  q: string;
  capability: string;
  tags: string;
  min_reputation: string;
  /** "true" when "Only online now" is ticked. */
  available: string;
  /** "federated" when "Include other registries" is ticked. */
  scope: string;
  /** Only agents that proved this domain (docs/identity.md). */
  domain: string;
  sort: string;
  order: string;
  offset: number;
}

export interface HomeView {
  form: SearchForm;
  result?: SearchResponse;
  /** Why the search could not run (shown instead of results). */
  error?: string;
  stats: ExtendedStats;
  /** Success rates of the result's agents, read for the page in one query. */
  labels?: Map<string, AgentLabel>;
  /** Availability of the result's agents that were ever observed, and the clock it was read at. */
  availability?: { byDid: Map<string, { status: string; last_seen_at: number | null }>; now: number };
}

export function searchHref(form: SearchForm, offset: number): string {
  const params = new URLSearchParams();
  for (const key of [
    'q',
    'capability',
    'tags',
    'min_reputation',
    'available',
    'scope',
    'domain',
    'sort',
    'order',
  ] as const) {
    if (form[key] !== '') params.set(key, form[key]);
  }
  if (offset > 0) params.set('offset', String(offset));
  const query = params.toString();
  return query === '' ? '/' : `/?${query}`;
}

/**
 * The form as search arguments, the MCP search tool's (faces/search-arguments.ts validates both): blank
 * fields and blank tags between commas are left out, and a minimum reputation that is not a number is
 * passed as typed, so the validator says what it must be.
 */
export function searchArgumentsOf(form: SearchForm): Record<string, unknown> {
  const args: Record<string, unknown> = { limit: PAGE_SIZE, offset: form.offset };
  if (form.q.trim() !== '') args.q = form.q;
  if (form.capability.trim() !== '') args.capability = form.capability;
  if (form.tags.trim() !== '') args.tags = form.tags.split(',').filter((tag) => tag.trim() !== '');
  if (form.min_reputation.trim() !== '') {
    const min = Number(form.min_reputation);
    args.min_reputation = Number.isFinite(min) ? min : form.min_reputation;
  }
  // Passed as sent, so a value other than the checkbox's reads as the validator says.
  if (form.available !== '') args.available = form.available;
  if (form.scope !== '') args.scope = form.scope;
  if (form.domain.trim() !== '') args.domain = form.domain.trim();
  // The form's "Relevance" is the service's default order, not a sort of its own.
  if (form.sort !== '' && form.sort !== 'relevance') args.sort = form.sort;
  if (form.order !== '') args.order = form.order;
  return args;
}

/** "Online now" or "last seen 3 h ago" for a result's card; nothing for an agent never observed. */
function availabilityOf(view: HomeView, did: string): string | undefined {
  if (view.availability === undefined) return undefined;
  const known = view.availability.byDid.get(did);
  return known === undefined ? undefined : availabilityText(known, view.availability.now);
}

/** What an unsearched list shows, in its own order: the title says which agents and how sorted. */
function listTitle(form: SearchForm): string {
  const agents = form.available === 'true' ? 'Agents online now' : 'Agents';
  if (form.sort === 'created_at')
    return form.order === 'asc' ? `${agents}, oldest first` : `${agents}, newest first`;
  if (form.sort === 'availability') return `${agents}, online first`;
  return `${agents} by reputation`;
}

function option(value: string, label: string, selected: string): Html {
  return html`<option value="${value}" ${value === selected ? html` selected` : ''}>${label}</option>`;
}

export function renderHome(view: HomeView): Html {
  const { form, result, error, stats, labels } = view;
  const inUse = ['capability', 'tags', 'min_reputation', 'available', 'scope', 'sort', 'order'].filter(
    (key) => form[key as keyof SearchForm] !== '',
  ).length;
  const searching = ['q', 'capability', 'tags', 'min_reputation'].some(
    (key) => form[key as keyof SearchForm] !== '',
  );
  return html`<section class="hero" aria-labelledby="page-title">
      <h1 id="page-title">Find an agent</h1>
      <p class="lead">
        Agents prove control of a key, publish what they can do, and are reviewed by the agents that call
        them.
      </p>
      <p class="totals">
        <span><strong>${stats.agents_count}</strong> agents</span>
        <span><strong>${stats.reviews_count}</strong> reviews</span>
        <span><strong>${stats.searches_count}</strong> searches</span> <a href="/stats">More statistics</a>
      </p>
    </section>

    <form class="search" method="get" action="/" role="search" aria-label="Agents" data-live-search>
      <div class="field field-q">
        <label for="q">Search</label>
        <input
          id="q"
          name="q"
          type="search"
          value="${form.q}"
          placeholder="e.g. translate french"
          maxlength="${SEARCH_RULES.queryMaxLength}"
          autocomplete="off"
        />
      </div>
      <details class="filter-box" open data-collapse-narrow>
        <summary>Filters and sort${inUse === 0 ? '' : ` (${inUse} in use)`}</summary>
        <div class="filters">
        <div class="field">
          <label for="capability">Capability type</label>
          <input
            id="capability"
            name="capability"
            type="text"
            value="${form.capability}"
            placeholder="e.g. translation"
            maxlength="${LIMITS.capabilityTypeMaxLength}"
          />
        </div>
        <div class="field">
          <label for="tags">Tags <span class="hint">(comma-separated, any of)</span></label>
          <input
            id="tags"
            name="tags"
            type="text"
            value="${form.tags}"
            placeholder="e.g. fr,de"
            maxlength="1000"
          />
        </div>
        <div class="field">
          <label for="domain">Verified domain</label>
          <input
            id="domain"
            name="domain"
            type="text"
            value="${form.domain}"
            placeholder="e.g. example.com"
            maxlength="260"
          />
        </div>
        <div class="field">
          <label for="min_reputation">Minimum reputation</label>
          <input
            id="min_reputation"
            name="min_reputation"
            type="number"
            min="${SEARCH_RULES.minReputation.min}"
            max="${SEARCH_RULES.minReputation.max}"
            step="1"
            value="${form.min_reputation}"
            inputmode="numeric"
          />
        </div>
        <div class="field">
          <label for="sort">Sort by</label>
          <select id="sort" name="sort">
            ${option('', 'Relevance', form.sort)}
            ${option('reputation', 'Reputation', form.sort)} ${option('created_at', 'Newest', form.sort)}
            ${option('availability', 'Online first', form.sort)}
          </select>
        </div>
        <div class="field">
          <label for="order">Order</label>
          <select id="order" name="order">
            ${option('', 'Descending', form.order)} ${option('asc', 'Ascending', form.order)}
          </select>
        </div>
        <div class="field field-check">
          <label for="available">
            <input id="available" name="available" type="checkbox" value="true" ${form.available === 'true' ? html` checked` : ''} />
            Only online now
          </label>
        </div>
        <div class="field field-check">
          <label for="scope">
            <input id="scope" name="scope" type="checkbox" value="federated" ${form.scope === 'federated' ? html` checked` : ''} />
            Include other registries
          </label>
        </div>
        </div>
      </details>
      <div class="actions"><button type="submit">Search</button> <a href="/" class="reset">Clear</a></div>
    </form>

    <section id="results" class="results" aria-labelledby="results-title" aria-live="polite">
      ${renderResults(form, searching, result, error, labels, (did) => availabilityOf(view, did))}
    </section>`;
}

function renderResults(
  form: SearchForm,
  searching: boolean,
  result: SearchResponse | undefined,
  error: string | undefined,
  labels: Map<string, AgentLabel> | undefined,
  availability: (did: string) => string | undefined,
): Html {
  if (error !== undefined) {
    return html`<h2 id="results-title">Results</h2>
      <p class="error" role="alert">${error}</p>`;
  }
  if (result === undefined) return html``;
  const title = searching
    ? html`${result.total} ${result.total === 1 ? 'agent matches' : 'agents match'}`
    : html`${listTitle(form)}`;
  return html`<h2 id="results-title">${title}</h2>
    ${
      result.agents.length === 0
        ? html`<p class="empty">
            No agent matches. Try fewer words or filters, or <a href="/">see all agents</a>.
          </p>`
        : html`<ol class="cards">
            ${result.agents.map((agent) => agentSummaryCard(agent, labels?.get(agent.did), availability(agent.did)))}
          </ol>`
    }
    ${pager({
      label: 'Result pages',
      // Offsets past offsetMax are refused: the pager offers no page beyond it.
      total: Math.min(result.total, SEARCH_RULES.offsetMax + 1),
      limit: result.limit,
      offset: result.offset,
      href: (offset) => searchHref(form, offset),
    })}`;
}
