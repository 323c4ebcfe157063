import type { Config } from '../../kernel/config.js';
import { SUPPORTED_CHAINS } from '@agent-registry/protocol';
import { KEY_TYPES } from '@agent-registry/protocol';
import { REVIEW_RULES, SEARCH_RULES, STATS_RULES } from '../../kernel/discovery-rules.js';
import { LIMITS } from '../../kernel/limits.js';
import { REPUTATION_MODEL } from '../reviews/reputation-model.js';
import { LATENCY_BUCKETS_MS, SERVICE_RECORD_RULES } from '../service-record/service-record-model.js';
import type { Governance } from './stats-schemas.js';

export function registryGovernance(config: Config): Governance {
  return {
    identity: {
      key_types: [...KEY_TYPES],
      did_methods: ['did:web', 'did:pkh'],
      chains: SUPPORTED_CHAINS.map((chain) => chain.chain_id),
      registration_timestamp_window_seconds: LIMITS.timestampSkewMs / 1000,
      token_ttl_seconds: config.identity.tokenTtlSeconds,
      registration_rate_limit: {
        per_address: config.registration.rateLimit,
        per_network: config.registration.prefixRateLimit,
        per_ipv6_48: config.registration.ipv6SiteRateLimit,
        window_seconds: config.registration.rateWindowSeconds,
      },
      registration_proof_of_work_bits: config.registration.powBits,
      profile_max_bytes: config.registration.profileMaxBytes,
    },
    reviews: {
      rating_min: REVIEW_RULES.ratingMinHundredths / 100,
      rating_max: REVIEW_RULES.ratingMaxHundredths / 100,
      rating_decimals: REVIEW_RULES.ratingDecimals,
      comment_max_length: REVIEW_RULES.commentMaxLength,
      reviews_per_agent: REVIEW_RULES.reviewsPerAgent,
      self_review_allowed: false,
      edit_window_seconds: REVIEW_RULES.editWindowMs / 1000,
      edit_max_rating_change: REVIEW_RULES.maxRatingChangeHundredths / 100,
      rate_limit: { max_reviews: config.reviews.rateLimit, window_seconds: config.reviews.rateWindowSeconds },
      verified_review:
        'call_record_id is the task_id of a completed invocation in which the reviewer was the caller and the reviewed agent the target',
    },
    reputation: {
      scale_min: 0,
      scale_max: 100,
      prior_mean: REPUTATION_MODEL.priorMean,
      prior_weight: REPUTATION_MODEL.priorWeight,
      verified_weight: REPUTATION_MODEL.verifiedWeight,
      unverified_weight: REPUTATION_MODEL.unverifiedWeight,
      decay_days: REPUTATION_MODEL.decayDays,
      refresh_interval_seconds: config.reviews.reputationRefreshSeconds,
      version: REPUTATION_MODEL.version,
      reviewer_weight: {
        maturity_days: REPUTATION_MODEL.maturityDays,
        breadth_partners: REPUTATION_MODEL.breadthPartners,
        breadth_floor: REPUTATION_MODEL.breadthFloor,
        unrated_standing: REPUTATION_MODEL.unratedStanding,
        reciprocal_factor: REPUTATION_MODEL.reciprocalFactor,
        unproven_cap: REPUTATION_MODEL.unprovenCap,
        linked_reviewers: 'weight 0; their call records do not verify',
        identity_links: ['same webhook host', 'registration referrer naming a registered agent'],
      },
    },
    service_record: {
      windows_days: [...SERVICE_RECORD_RULES.windowsDays],
      daily_retention_days: SERVICE_RECORD_RULES.dailyRetentionDays,
      latency_buckets_ms: [...LATENCY_BUCKETS_MS],
      success_rate: 'completed / (completed + failed + timeout)',
      excluded: 'calls by the agent itself or by identities linked to it',
    },
    search: {
      limit_default: SEARCH_RULES.limitDefault,
      limit_max: SEARCH_RULES.limitMax,
      offset_max: SEARCH_RULES.offsetMax,
      sorts: [...SEARCH_RULES.sorts],
      full_text: true,
    },
    stats_cache_seconds: STATS_RULES.cacheMs / 1000,
  };
}
