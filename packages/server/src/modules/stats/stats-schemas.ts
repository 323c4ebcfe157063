import { Type, type Static } from '@sinclair/typebox';

const Governance = Type.Object(
  {
    identity: Type.Object({
      key_types: Type.Array(Type.String()),
      did_methods: Type.Array(Type.String()),
      chains: Type.Array(Type.String()),
      registration_timestamp_window_seconds: Type.Integer(),
      token_ttl_seconds: Type.Integer(),
      registration_rate_limit: Type.Object(
        {
          per_address: Type.Integer(),
          per_network: Type.Integer(),
          per_ipv6_48: Type.Integer(),
          window_seconds: Type.Integer(),
        },
        {
          description:
            'Registrations per client address, per /24 (IPv4) or /64 (IPv6) network and per IPv6 /48, in a sliding window',
        },
      ),
      registration_proof_of_work_bits: Type.Integer({
        description: 'Zero bits the proof_of_work of a registration must reach; 0: none is asked',
      }),
      profile_max_bytes: Type.Integer({ description: 'Most bytes a profile may take as stored' }),
    }),
    reviews: Type.Object({
      rating_min: Type.Number(),
      rating_max: Type.Number(),
      rating_decimals: Type.Integer(),
      comment_max_length: Type.Integer(),
      reviews_per_agent: Type.Integer(),
      self_review_allowed: Type.Boolean(),
      edit_window_seconds: Type.Integer(),
      edit_max_rating_change: Type.Number(),
      rate_limit: Type.Object({ max_reviews: Type.Integer(), window_seconds: Type.Integer() }),
      verified_review: Type.String(),
    }),
    reputation: Type.Object({
      scale_min: Type.Number(),
      scale_max: Type.Number(),
      prior_mean: Type.Number(),
      prior_weight: Type.Number(),
      verified_weight: Type.Number(),
      unverified_weight: Type.Number(),
      decay_days: Type.Number(),
      refresh_interval_seconds: Type.Integer(),
      version: Type.Integer({ description: 'Formula version (docs/reputation.md)' }),
      reviewer_weight: Type.Object({
        maturity_days: Type.Number(),
        breadth_partners: Type.Integer(),
        breadth_floor: Type.Number(),
        unrated_standing: Type.Number(),
        reciprocal_factor: Type.Number(),
        unproven_cap: Type.Number(),
        linked_reviewers: Type.String(),
        identity_links: Type.Array(Type.String()),
      }),
    }),
    service_record: Type.Object({
      windows_days: Type.Array(Type.Integer()),
      daily_retention_days: Type.Integer(),
      latency_buckets_ms: Type.Array(Type.Integer()),
      success_rate: Type.String(),
      excluded: Type.String(),
    }),
    search: Type.Object({
      limit_default: Type.Integer(),
      limit_max: Type.Integer(),
      offset_max: Type.Integer(),
      sorts: Type.Array(Type.String()),
      full_text: Type.Boolean(),
    }),
    stats_cache_seconds: Type.Integer(),
  },
  { description: 'The rules this registry enforces' },
);
/** The registry's rules as published in GET /api/stats, built from the same constants the code enforces. */
export type Governance = Static<typeof Governance>;

export const ExtendedStats = Type.Object({
  agents_count: Type.Integer({ description: 'Active agents' }),
  reviews_count: Type.Integer(),
  searches_count: Type.Integer({ description: 'Searches served, by every node' }),
  governance: Governance,
  updated_at: Type.Integer({ description: 'Epoch milliseconds when these numbers were computed' }),
});
/** Section 2.10 ExtendedStats. */
export type ExtendedStats = Static<typeof ExtendedStats>;
