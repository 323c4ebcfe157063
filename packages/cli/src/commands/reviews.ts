import { REVIEW_LIMITS } from '@agent-registry/protocol/limits';
import type { Command } from 'commander';
import { contextOf, type CliContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { withExamples } from '../help.js';
import { agentClient, anonymousClient, resolveAgent, targetDid, type Connection } from '../registry.js';
import { integerIn, numberIn } from './discover.js';
import { isRegistryError } from '../registry-error.js';

interface ReviewRow {
  review_id: string;
  reviewer_did: string;
  target_did: string;
  rating: number;
  comment?: string | null;
  created_at: number;
  verified: boolean;
  is_edited: boolean;
}

function printReviews(cli: CliContext, reviews: ReviewRow[], who: 'reviewer' | 'target'): void {
  cli.out.table(
    reviews,
    [
      { header: 'review', value: (review) => review.review_id },
      {
        header: who,
        value: (review) => (who === 'reviewer' ? review.reviewer_did : review.target_did),
        max: 70,
      },
      { header: 'rating', value: (review) => review.rating.toFixed(2) },
      { header: 'verified', value: (review) => (review.verified ? 'yes' : 'no') },
      { header: 'date', value: (review) => new Date(review.created_at).toISOString().slice(0, 10) },
      { header: 'comment', value: (review) => review.comment ?? '', max: 50 },
    ],
    'no reviews',
  );
}

/** The caller's own review of `target`, looked up page by page in /api/reviews/my. */
async function findMyReview(connection: Connection, target: string): Promise<ReviewRow | undefined> {
  const limit = REVIEW_LIMITS.pageLimitMax;
  for (let offset = 0; ; offset += limit) {
    const page = await connection.client.myReviews({ limit, offset });
    const found = (page.reviews as ReviewRow[]).find((review) => review.target_did === target);
    if (found) return found;
    if (page.reviews.length < limit || offset + limit >= page.total) return undefined;
  }
}

/** The ends of the rating scale as the registry writes them: "1.00" and "10.00". */
const lowestRating = REVIEW_LIMITS.ratingMin.toFixed(REVIEW_LIMITS.ratingDecimals);
const highestRating = REVIEW_LIMITS.ratingMax.toFixed(REVIEW_LIMITS.ratingDecimals);
const editWindowMinutes = REVIEW_LIMITS.editWindowMs / 60_000;

interface ReviewOptions {
  rating: number;
  comment?: string;
  task?: string;
  edit?: boolean;
}

export function registerReview(program: Command): void {
  const command = program
    .command('review')
    .description(
      `Review an agent you used (${lowestRating}-${highestRating}); with --task it counts as verified and weighs double`,
    )
    .argument('<did>', 'the agent reviewed: its DID or its handle')
    .requiredOption(
      '--rating <rating>',
      `from ${lowestRating} to ${highestRating}, at most ${REVIEW_LIMITS.ratingDecimals} decimals`,
      numberIn(REVIEW_LIMITS.ratingMin, REVIEW_LIMITS.ratingMax),
    )
    .option('--comment <text>', `at most ${REVIEW_LIMITS.commentMaxLength} characters`)
    .option(
      '--task <task-id>',
      'the task id of a completed invocation of that agent by you (verified review)',
    )
    .option(
      '--edit',
      `change your existing review of this agent (within ${editWindowMinutes} minutes, by at most ${REVIEW_LIMITS.editMaxRatingChange.toFixed(1)})`,
    )
    .action(async (ref: string, options: ReviewOptions, self: Command) => {
      const cli = contextOf(self);
      const connection = await agentClient(cli);
      const did = await resolveAgent(cli, ref);
      let review;
      if (options.edit) {
        const existing = await findMyReview(connection, did);
        if (!existing) {
          throw new CliError(
            `you have not reviewed ${did} yet: leave out --edit`,
            EXIT.failed,
            'NO_REVIEW_TO_EDIT',
          );
        }
        review = await connection.client.editReview(existing.review_id, {
          rating: options.rating,
          ...(options.comment !== undefined ? { comment: options.comment } : {}),
        });
      } else {
        try {
          review = await connection.client.review({
            targetDid: did,
            rating: options.rating,
            ...(options.comment !== undefined ? { comment: options.comment } : {}),
            ...(options.task !== undefined ? { callRecordId: options.task } : {}),
          });
        } catch (error) {
          if (isRegistryError(error) && error.code === 'REVIEW_EXISTS') {
            throw new CliError(
              `you have already reviewed ${did}: change that review with \`agent-registry review ${did} --rating ${options.rating} --edit\` (within ${editWindowMinutes} minutes of writing it)`,
              EXIT.failed,
              'REVIEW_EXISTS',
              { status: error.status },
            );
          }
          throw error;
        }
      }
      const shown = review as ReviewRow;
      cli.out.result(review, () =>
        cli.out.fields([
          [options.edit ? 'edited' : 'reviewed', shown.target_did],
          ['review', shown.review_id],
          ['rating', shown.rating.toFixed(2)],
          ['verified', shown.verified ? 'yes' : 'no'],
          ['comment', shown.comment ?? null],
        ]),
      );
    });
  withExamples(
    command,
    'agent-registry review did:web:registry.example:agent:0123... --rating 9 --comment "fast" --task <task-id>',
    'agent-registry review did:web:registry.example:agent:0123... --rating 7.5 --edit',
  );
}

export function registerReviews(program: Command): void {
  const command = program
    .command('reviews')
    .description(
      "List an agent's reviews (default: this agent's), or with --mine the reviews this agent wrote",
    )
    .argument('[did]', "the agent (default: this agent's own DID)")
    .option('--mine', 'reviews written by this agent')
    .option(
      '--limit <n>',
      `1-${REVIEW_LIMITS.pageLimitMax} (default ${REVIEW_LIMITS.pageLimitDefault})`,
      integerIn(1, REVIEW_LIMITS.pageLimitMax),
    )
    .option('--offset <n>', 'skip this many', integerIn(0, REVIEW_LIMITS.pageOffsetMax))
    .action(
      async (
        did: string | undefined,
        options: { mine?: boolean; limit?: number; offset?: number },
        self: Command,
      ) => {
        const cli = contextOf(self);
        const paging = {
          ...(options.limit !== undefined ? { limit: options.limit } : {}),
          ...(options.offset !== undefined ? { offset: options.offset } : {}),
        };
        const page = options.mine
          ? await (await agentClient(cli)).client.myReviews(paging)
          : await (await anonymousClient(cli)).getReviews(await targetDid(cli, did), paging);
        cli.out.result(page, () => {
          printReviews(cli, page.reviews as ReviewRow[], options.mine ? 'target' : 'reviewer');
          if (page.reviews.length > 0) {
            cli.out.line();
            cli.out.line(`${page.offset + 1}-${page.offset + page.reviews.length} of ${page.total}`);
          }
        });
      },
    );
  withExamples(
    command,
    'agent-registry reviews did:web:registry.example:agent:0123...',
    'agent-registry reviews                 # reviews of this agent',
    'agent-registry reviews --mine --json   # reviews this agent wrote',
  );
}
