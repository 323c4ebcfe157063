/**
 * How the CLI shows a reputation score: "unrated" until the first review. The API keeps the number
 * (0 before any review, as the interface defines it); --json prints it unchanged.
 */
export function shownScore(agent: { reputation_score: number; total_reviews: number }): string {
  return agent.total_reviews === 0 ? 'unrated' : String(agent.reputation_score);
}
