import type { DidDocument } from '../../../modules/identity/schemas.js';
import type { AgentLabel } from '../../../modules/agents/agent-labels.js';
import type { AgentProfile } from '../../../modules/agents/schemas.js';
import { REPUTATION_MODEL } from '../../../modules/reviews/reputation-model.js';
import type { ReputationStats, ReviewsPage } from '../../../modules/reviews/schemas.js';
import { barChart } from '../charts.js';
import {
  agentHref,
  availabilityText,
  copyButton,
  formatDate,
  formatScore,
  pager,
  tagList,
} from '../components.js';
import { html, safeHttpUrl, type Html } from '../html.js';
import { callSnippets } from '../snippets.js';
import { percent, serviceRecordSection } from './agent-service-record.js';

export const REVIEWS_PAGE_SIZE = 10;

export interface AgentView {
  profile: AgentProfile;
  reputation: ReputationStats;
  reviews: ReviewsPage;
  /** The reviewers of this page of reviews, by DID (one query for the page). */
  reviewers: Map<string, AgentLabel>;
  /** Undefined when the DID does not resolve (a deactivated agent). */
  didDocument: DidDocument | undefined;
  publicUrl: string;
  /** The registry's clock when the page was made: "last seen 3 h ago" counts from it. */
  now: number;
  /** The agent's place in the transparency log; undefined when it is not logged yet. */
  log: { leafIndex: number; treeSize: number; verified: boolean } | undefined;
}

function logText(view: AgentView): Html | string {
  const { log, profile } = view;
  if (log === undefined) return 'not logged yet (it enters the log at its next change)';
  const proof = `/api/agents/${encodeURIComponent(profile.did)}/log-proof`;
  return html`logged at position ${log.leafIndex},
    ${
      log.verified
        ? 'checked against the log by this registry as it made this page; check it yourself with the'
        : html`<strong>does not match the logged record</strong> ·`
    }
    <a href="${proof}">proof</a>`;
}

function reputationHint(reputation: ReputationStats): Html {
  const { priorMean, priorWeight, maturityDays, breadthPartners } = REPUTATION_MODEL;
  if (reputation.total_reviews === 0) {
    return html`<p class="hint-why" id="why-score">
      <strong>Why unrated?</strong> No reviews yet. The API reads its score as 0 until the first review,
      so unrated agents sort below every rated one and a minimum reputation leaves them out.
    </p>`;
  }
  const fromRatings = ((reputation.average_rating - 1) / 9) * 100;
  const score = formatScore(reputation.reputation_score);
  if (Math.abs(fromRatings - reputation.reputation_score) < 5) {
    return html`<p class="hint-why" id="why-score">
      <strong>Why ${score}?</strong> A neutral ${priorMean}, counted as ${priorWeight} reviews, moved by each
      review as far as the registry trusts its reviewer.
    </p>`;
  }
  return html`<p class="hint-why" id="why-score">
    <strong
      >Why ${score}, when the average rating ${reputation.average_rating.toFixed(2)}/10 alone would give
      ${formatScore(fromRatings)}?</strong
    >
    A review
    counts as far as the registry trusts its reviewer: accounts younger than ${maturityDays} days weigh
    nothing, callers of fewer than ${breadthPartners} other reviewed agents little, and the score starts
    from a neutral ${priorMean} counted as ${priorWeight} reviews.
  </p>`;
}

function isInvocable(profile: AgentProfile): boolean {
  return profile.status === 'active' && profile.invocation_enabled && profile.delivery_mode !== 'none';
}

/** The registry's endpoints for this agent; invocation links only when the agent can take calls. */
function links(profile: AgentProfile): { label: string; href: string; note: string }[] {
  const did = encodeURIComponent(profile.did);
  const invocable =
    profile.status === 'active' && profile.invocation_enabled && profile.delivery_mode !== 'none';
  const out = [
    { label: 'Profile (REST)', href: `/api/agents/${did}`, note: 'GET, JSON' },
    { label: 'Reputation (REST)', href: `/api/agents/${did}/reputation`, note: 'GET, JSON' },
    { label: 'DID document', href: `/api/did/${did}`, note: 'GET, JSON' },
    { label: 'A2A agent card', href: `/a2a/${did}/.well-known/agent-card.json`, note: 'GET, JSON' },
  ];
  if (invocable) {
    out.push(
      { label: 'Invoke (REST)', href: `/api/invoke`, note: 'POST with a bearer token' },
      { label: 'A2A endpoint', href: `/a2a/${did}/`, note: 'JSON-RPC, POST' },
      { label: 'MCP endpoint', href: `/mcp/agents/${did}`, note: 'streamable HTTP, POST' },
    );
  }
  return out;
}

function invocationText(profile: AgentProfile): string {
  if (profile.status === 'suspended')
    return `Not invocable: the registry's operator suspended the agent (${profile.moderation?.reason ?? 'see /api/moderation'}).`;
  if (profile.status !== 'active') return 'Not invocable: the agent is deactivated.';
  if (!profile.invocation_enabled || profile.delivery_mode === 'none') {
    return 'Not invocable through the registry (invocation is not enabled).';
  }
  return profile.delivery_mode === 'queue'
    ? 'Invocable through the registry; the agent collects its tasks from a queue.'
    : 'Invocable through the registry; the registry delivers tasks to the agent by signed webhook.';
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

function capabilitySection(profile: AgentProfile): Html {
  if (profile.capabilities.length === 0) return html`<p>No capabilities published.</p>`;
  return html`<ul class="capabilities">
    ${profile.capabilities.map(
      (capability) =>
        html`<li class="capability">
          <h3><code>${capability.type}</code></h3>
          ${capability.description == null ? '' : html`<p>${capability.description}</p>`}
          ${tagList(capability.tags ?? [], `Tags of ${capability.type}`)}
          ${schemaBlock('Input schema', capability.input_schema)}
          ${schemaBlock('Output schema', capability.output_schema)}
        </li>`,
    )}
  </ul>`;
}

function schemaBlock(label: string, schema: unknown): Html {
  if (schema === null || schema === undefined) return html`<p class="muted">${label}: any JSON.</p>`;
  return html`<details class="schema">
    <summary>${label}</summary>
    <pre tabindex="0"><code>${json(schema)}</code></pre>
  </details>`;
}

function snippetSection(view: AgentView): Html {
  const { profile, publicUrl } = view;
  if (!isInvocable(profile)) {
    return html`<section aria-labelledby="call-title" class="panel">
      <h2 id="call-title">Call this agent</h2>
      <p>${invocationText(profile)}</p>
    </section>`;
  }
  const capability = profile.capabilities[0];
  if (capability === undefined) return html``;
  const snippets = callSnippets({
    registry: publicUrl,
    did: profile.did,
    capability: capability.type,
    inputSchema: capability.input_schema,
  });
  const block = (id: string, title: string, code: string, note: Html) =>
    html`<div class="snippet">
      <h3 id="${id}">${title}</h3>
      ${note}
      <div class="code">
        <pre tabindex="0" aria-labelledby="${id}"><code>${code}</code></pre>
        ${copyButton(code, `Copy the ${title} snippet`)}
      </div>
    </div>`;
  return html`<section aria-labelledby="call-title" class="panel">
    <h2 id="call-title">Call this agent</h2>
    <p>
      With your own registered agent's key (see <a href="/join">Register an agent</a>), calling
      <code>${capability.type}</code> with a sample input made from its schema:
    </p>
    ${block('snippet-cli', 'CLI', snippets.cli, html`<p class="muted">After <code>npm ci</code> in the repository, run it as <code>npx agent-registry</code>.</p>`)}
    ${block('snippet-sdk', 'SDK (TypeScript)', snippets.sdk, html``)}
    ${block('snippet-curl', 'curl', snippets.curl, html`<p class="muted">The first line puts a fresh token from <code>agent-registry token</code> (or <code>POST /api/auth/token</code>) in <code>$AGENT_REGISTRY_TOKEN</code>.</p>`)}
  </section>`;
}

/** The reviewing agent by name, linked to its page (its DID on hover); the DID only when it has no row. */
function reviewerLine(did: string, label: AgentLabel | undefined): Html {
  if (label === undefined) {
    return html`<p class="reviewer">by <a href="${agentHref(did)}"><code>${did}</code></a></p>`;
  }
  return html`<p class="reviewer">
    by <a href="${agentHref(did)}" title="${did}">${label.name}</a>${label.active ? '' : ' (deactivated)'}
  </p>`;
}

function reviewsSection(view: AgentView): Html {
  const { reviews, profile, reviewers } = view;
  return html`<section aria-labelledby="reviews-title" class="panel" id="reviews">
    <h2 id="reviews-title">Reviews <span class="count">(${reviews.total})</span></h2>
    ${
      reviews.reviews.length === 0
        ? html`<p>No reviews yet.</p>`
        : html`<ol class="reviews">
            ${reviews.reviews.map(
              (review) =>
                html`<li class="review">
                  <article>
                    <p class="review-head">
                      <span class="rating" aria-label="Rating ${review.rating} out of 10"
                        >${review.rating.toFixed(review.rating % 1 === 0 ? 0 : 2)}<span aria-hidden="true"
                          >/10</span
                        ></span
                      >
                      ${review.verified ? html`<span class="badge badge-verified" title="The reviewer called this agent through the registry">Verified call</span>` : ''}
                      ${review.is_edited ? html`<span class="badge">Edited</span>` : ''}
                      <time datetime="${new Date(review.created_at).toISOString()}"
                        >${formatDate(review.created_at)}</time
                      >
                    </p>
                    ${review.comment === null ? '' : html`<p class="comment">${review.comment}</p>`}
                    ${reviewerLine(review.reviewer_did, reviewers.get(review.reviewer_did))}
                  </article>
                </li>`,
            )}
          </ol>`
    }
    ${pager({
      label: 'Review pages',
      total: reviews.total,
      limit: reviews.limit,
      offset: reviews.offset,
      href: (offset) => `${agentHref(profile.did)}${offset > 0 ? `?reviews_offset=${offset}` : ''}#reviews`,
    })}
  </section>`;
}

/** Domains the agent proved (docs/identity.md); a port appears only on development registries. */
function domainList(domains: readonly string[]): Html {
  return html`<ul class="domains">
    ${domains.map((domain) => html`<li><code>${domain}</code></li>`)}
  </ul>`;
}

export function renderAgent(view: AgentView): Html {
  const { profile, reputation, didDocument } = view;
  const avatar = safeHttpUrl(profile.avatar);
  const website = safeHttpUrl(profile.website);
  const active = profile.status === 'active';
  const distribution = (['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'] as const).map((bucket) => ({
    label: bucket,
    value: reputation.rating_distribution[bucket],
  }));
  return html`<article class="agent" aria-labelledby="page-title">
    <header class="agent-head">
      ${avatar === undefined ? '' : html`<img class="avatar" src="${avatar}" alt="" width="72" height="72" referrerpolicy="no-referrer" loading="lazy" />`}
      <div>
        <h1 id="page-title">${profile.name}</h1>
        ${
          active
            ? ''
            : profile.status === 'suspended'
              ? html`<p class="status-inactive" role="status"><strong>Suspended</strong> by this registry's operator (${profile.moderation?.reason ?? 'see the moderation log'}${profile.moderation?.note == null ? '' : html`: ${profile.moderation.note}`}); it takes no calls and is not listed. Decisions: <a href="/api/moderation">/api/moderation</a>.</p>`
              : html`<p class="status-inactive" role="status"><strong>Deactivated</strong> — this agent no longer takes calls; its record stays readable.</p>`
        }
        ${profile.description === null ? '' : html`<p class="lead">${profile.description}</p>`}
        ${
          website !== undefined
            ? html`<p><a href="${website}" rel="nofollow noopener noreferrer ugc">${website}</a></p>`
            : profile.website === null
              ? ''
              : html`<p class="muted">Website (not a web link): <span>${profile.website}</span></p>`
        }
      </div>
    </header>
    <section aria-labelledby="identity-title" class="panel">
      <h2 id="identity-title">Identity</h2>
      <dl class="facts">
        <dt>DID</dt>
        <dd><code class="did">${profile.did}</code> ${copyButton(profile.did, 'Copy the DID')}</dd>
        ${
          profile.handle === undefined
            ? ''
            : html`<dt>Handle</dt>
        <dd><code class="handle">${profile.handle}</code></dd>`
        }
        ${
          profile.domains === undefined
            ? ''
            : html`<dt>Verified domains</dt>
        <dd>${domainList(profile.domains)}</dd>`
        }
        <dt>Key type</dt>
        <dd>
          ${profile.key_type}${profile.chain_id === null ? '' : html` (chain <code>${profile.chain_id}</code>)`}
        </dd>
        ${
          profile.key_recovery === undefined
            ? ''
            : html`<dt>Key recovery</dt>
        <dd class="key-recovery" role="status">
          <strong>Pending</strong>: the key <code>${profile.key_recovery.new_public_key}</code> becomes this agent's key on
          <time datetime="${new Date(profile.key_recovery.completes_at).toISOString()}">${formatDate(profile.key_recovery.completes_at)}</time>
          unless its current key cancels.
        </dd>`
        }
        <dt>Status</dt>
        <dd>${active ? 'Active' : profile.status === 'suspended' ? 'Suspended' : 'Deactivated'}</dd>
        <dt>Invocation</dt>
        <dd>${invocationText(profile)}</dd>
        <dt>Availability</dt>
        <dd class="availability availability-${profile.availability.status}">
          ${availabilityText(profile.availability, view.now)}${profile.availability.uptime_24h === null ? '' : html`; up ${percent(profile.availability.uptime_24h)} of the last 24 h, ${percent(profile.availability.uptime_7d)} of 7 days`}
        </dd>
        <dt>Registered</dt>
        <dd>
          <time datetime="${new Date(profile.created_at).toISOString()}"
            >${formatDate(profile.created_at)}</time
          >
        </dd>
        <dt>Tags</dt>
        <dd>${profile.tags.length === 0 ? 'none' : tagList(profile.tags, 'Agent tags')}</dd>
        <dt>Transparency log</dt>
        <dd>${logText(view)}</dd>
        <dt>Report abuse</dt>
        <dd>
          As a registered agent: <code>agent-registry report ${profile.did} --reason malware|impersonation|spam|broken|other</code>
        </dd>
      </dl>
    </section>
    <section aria-labelledby="capabilities-title" class="panel">
      <h2 id="capabilities-title">Capabilities</h2>
      ${capabilitySection(profile)}
    </section>
    <section aria-labelledby="reputation-title" class="panel">
      <h2 id="reputation-title">Reputation</h2>
      <p class="reputation">
        ${
          reputation.total_reviews === 0
            ? html`<span class="big">unrated</span> · no reviews yet`
            : html`<span class="big">${formatScore(reputation.reputation_score)}</span>/100 · average rating
                ${reputation.average_rating.toFixed(2)}/10 · ${reputation.total_reviews}
                ${reputation.total_reviews === 1 ? 'review' : 'reviews'}, ${reputation.verified_reviews} verified`
        }
      </p>
      ${reputationHint(reputation)}
      <figure>
        ${reputation.total_reviews === 0 ? html`<p class="muted">No ratings yet.</p>` : barChart({ title: 'Rating distribution', bars: distribution, unit: 'reviews' })}
        <figcaption>
          Reviews per rating (1 to 10, rounded down).
          <a href="/stats#governance">How the score is computed</a>
        </figcaption>
      </figure>
    </section>
    ${serviceRecordSection(profile)} ${reviewsSection(view)} ${snippetSection(view)}
    <section aria-labelledby="links-title" class="panel">
      <h2 id="links-title">Endpoints</h2>
      <ul class="links">
        ${links(profile).map(
          (link) =>
            html`<li><a href="${link.href}">${link.label}</a> <span class="muted">${link.note}</span></li>`,
        )}
      </ul>
    </section>
    <section aria-labelledby="did-title" class="panel">
      <h2 id="did-title">DID document</h2>
      ${
        didDocument === undefined
          ? html`<p>The DID no longer resolves: the agent is deactivated.</p>`
          : html`<details class="schema">
              <summary>Show the DID document</summary>
              <pre tabindex="0"><code>${json(didDocument)}</code></pre>
            </details>`
      }
    </section>
  </article>`;
}
