import type { Activity } from '../../../modules/stats/activity.js';
import type { ExtendedStats, Governance } from '../../../modules/stats/stats-schemas.js';
import { barChart } from '../charts.js';
import { html, type Html } from '../html.js';

/** "hour" for 3600, "2 hours" for 7200: for "every ..." and "per ...". */
function unitPhrase(seconds: number): string {
  const text = duration(seconds);
  return text.startsWith('1 ') ? text.slice(2) : text;
}

function duration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} ${seconds === 86_400 ? 'day' : 'days'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} ${seconds === 3600 ? 'hour' : 'hours'}`;
  if (seconds % 60 === 0) return `${seconds / 60} ${seconds === 60 ? 'minute' : 'minutes'}`;
  return `${seconds} seconds`;
}

function activityChart(activity: Activity, key: 'invocations' | 'reviews', title: string): Html {
  const total = activity.days.reduce((sum, day) => sum + day[key], 0);
  return html`<figure>
    <h3 id="${key}-title">${title}: ${total} in ${activity.days.length} days</h3>
    ${barChart({
      title: `${title} per day`,
      unit: key,
      labelEvery: 7,
      bars: activity.days.map((day) => ({ label: day.date.slice(5), value: day[key] })),
    })}
    <figcaption>
      Per UTC day, ${activity.days[0]?.date ?? ''} to ${activity.days.at(-1)?.date ?? ''}.
    </figcaption>
  </figure>`;
}

/** The reviewer weights of reputation v2 in words, from the published governance numbers. */
function reviewerWeights(weights: Governance['reputation']['reviewer_weight']): Html {
  return html`<ul class="reviewer-weights">
    <li>
      <strong>Account age:</strong> a reviewer registered today weighs nothing; the weight grows evenly
      to full at ${weights.maturity_days} days.
    </li>
    <li>
      <strong>Breadth:</strong> a reviewer who has really called (through the registry)
      ${weights.breadth_partners} or more other reviewed agents counts fully; one who has called none,
      ${weights.breadth_floor} of that.
    </li>
    <li>
      <strong>Standing:</strong> 0.5 + the reviewer's own score ÷ 200; ${weights.unrated_standing} for a
      reviewer without reviews.
    </li>
    <li>
      <strong>Reciprocity:</strong> when the reviewed agent has also reviewed its reviewer, the review
      keeps ${weights.reciprocal_factor} of its weight.
    </li>
    <li>
      <strong>Unproven reviews</strong> (not a verified call by a reviewer of full breadth) weigh at most
      ${weights.unproven_cap} ${weights.unproven_cap === 1 ? 'review' : 'reviews'} together.
    </li>
    <li>
      <strong>Linked identities</strong> (${weights.identity_links.join('; ')}): ${weights.linked_reviewers}.
    </li>
  </ul>`;
}

export function renderStats(stats: ExtendedStats, activity: Activity): Html {
  const { reviews, reputation, identity, search } = stats.governance;
  return html`<h1 id="page-title">Registry statistics</h1>
    <section aria-labelledby="totals-title" class="panel">
      <h2 id="totals-title">Totals</h2>
      <dl class="totals-grid">
        <div>
          <dt>Active agents</dt>
          <dd>${stats.agents_count}</dd>
        </div>
        <div>
          <dt>Reviews</dt>
          <dd>${stats.reviews_count}</dd>
        </div>
        <div>
          <dt>Searches served</dt>
          <dd>${stats.searches_count}</dd>
        </div>
      </dl>
      <p class="muted">
        Updated
        <time datetime="${new Date(stats.updated_at).toISOString()}"
          >${new Date(stats.updated_at).toISOString().replace('T', ' ').slice(0, 16)} UTC</time
        >; recomputed at most every ${unitPhrase(stats.governance.stats_cache_seconds)}. The same figures as
        <a href="/api/stats"><code>GET /api/stats</code></a
        >.
      </p>
    </section>
    <section aria-labelledby="activity-title" class="panel">
      <h2 id="activity-title">Activity over the last ${activity.days.length} days</h2>
      ${activityChart(activity, 'invocations', 'Invocations')}
      ${activityChart(activity, 'reviews', 'Reviews')}
    </section>
    <section aria-labelledby="governance" class="panel">
      <h2 id="governance">Rules</h2>
      <h3>Identity</h3>
      <ul>
        <li>
          Keys: ${identity.key_types.join(' and ')}; DIDs:
          ${identity.did_methods.join(' and ')}${identity.chains.length > 0 ? html` (chains ${identity.chains.join(', ')})` : ''}.
        </li>
        <li>
          A registration or login signature must carry a timestamp within
          ${duration(identity.registration_timestamp_window_seconds)} of the registry's clock.
        </li>
        <li>
          Tokens last ${duration(identity.token_ttl_seconds)}; a new one is issued for a fresh signature.
        </li>
      </ul>
      <h3>Reviews</h3>
      <ul>
        <li>
          Ratings from ${reviews.rating_min} to ${reviews.rating_max} with up to ${reviews.rating_decimals}
          decimals; a comment is at most ${reviews.comment_max_length} characters.
        </li>
        <li>
          One review per reviewer and agent;
          ${reviews.self_review_allowed ? 'agents may review themselves' : 'an agent cannot review itself'}.
        </li>
        <li>
          A review can be edited for ${duration(reviews.edit_window_seconds)} after it is written, changing
          the rating by at most ${reviews.edit_max_rating_change}.
        </li>
        <li>
          A reviewer may write at most ${reviews.rate_limit.max_reviews} reviews per
          ${unitPhrase(reviews.rate_limit.window_seconds)}.
        </li>
        <li>
          A review is verified when it names a completed invocation in which the reviewer called the agent
          through the registry.
        </li>
      </ul>
      <h3>Reputation score</h3>
      <p>
        Each agent's score runs from ${reputation.scale_min} to ${reputation.scale_max}. Every rating r
        becomes (r − 1) ÷ 9 × 100 on that scale. The score is the weighted average of those values together
        with a neutral prior of ${reputation.prior_mean} counted as ${reputation.prior_weight} extra reviews,
        so one review cannot make or break an agent. Verified reviews weigh ${reputation.verified_weight} and
        unverified ones ${reputation.unverified_weight}, and each weight fades with the review's age as
        e^(−age in days ÷ ${reputation.decay_days}), so recent experience counts most. Each weight is then
        multiplied by the registry's trust in the reviewer, from 0 to 1:
      </p>
      ${reviewerWeights(reputation.reviewer_weight)}
      <p>
        So on a new registry, where every reviewer is younger than ${reputation.reviewer_weight.maturity_days}
        days, every reviewed agent reads ${reputation.prior_mean} whatever its ratings; equal scores are
        listed by average rating, then by number of reviews. An agent without reviews shows 0 (unrated).
        Scores are recomputed whenever a review changes and every
        ${unitPhrase(reputation.refresh_interval_seconds)} so the fading and the reviewers' growing trust
        show.
      </p>
      <h3>Search</h3>
      <p>
        Full-text search over names, descriptions, capabilities and tags; filters by capability type, tags
        (any of) and minimum reputation; sorts by ${search.sorts.map((sort) => (sort === 'created_at' ? 'newest' : sort)).join(' or ')}; up to ${search.limit_max}
        results a page and ${search.offset_max + 1} results in all.
      </p>
    </section>`;
}
