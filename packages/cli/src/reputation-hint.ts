import type { RegistryClient } from '@agent-registry/sdk';

/**
 * Why a reviewed agent's reputation reads exactly the neutral prior: its reviewers carry no weight yet
 * (accounts younger than the registry's maturity age weigh nothing). Undefined when that is not the
 * case, or when the registry does not publish its reviewer weights.
 */
export async function neutralScoreHint(
  client: RegistryClient,
  agent: { reputation_score: number; total_reviews: number; average_rating: number },
): Promise<string | undefined> {
  if (agent.total_reviews === 0) return undefined;
  let reputation;
  try {
    reputation = (await client.getStats()).governance?.reputation;
  } catch {
    // The hint is a courtesy: the profile itself was read, so show it without.
    return undefined;
  }
  // A registry older than reputation v2 publishes no reviewer weights.
  const maturityDays = (reputation as Partial<typeof reputation> | undefined)?.reviewer_weight?.maturity_days;
  if (reputation === undefined || maturityDays === undefined) return undefined;
  if (agent.reputation_score !== reputation.prior_mean) return undefined;
  const reviews = agent.total_reviews === 1 ? 'its review comes' : `its ${agent.total_reviews} reviews come`;
  return (
    `${reputation.prior_mean} is the neutral score: ${reviews} from reviewers that carry no weight yet ` +
    `(an account made today weighs nothing and gains its weight over ${maturityDays} days), so the average ` +
    `rating of ${agent.average_rating} does not move it yet. The rules: GET /api/stats, governance.reputation.`
  );
}
