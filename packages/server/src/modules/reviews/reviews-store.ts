import type { Insertable, Updateable } from 'kysely';
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { stampAgentChange } from '../agents/change-feed-store.js';
import type { ReviewsTable, TasksTable } from '../../db/schema/index.js';
import type { EvidencedReview } from './reputation-model.js';

export type ReviewRow = ReviewsTable;
export type NewReviewRow = Insertable<ReviewsTable>;

/**
 * Locks agent rows for the rest of the transaction with a no-op write, in DID order so two
 * transactions never wait on each other in a cycle. SQLite: the first write takes the database write
 * lock. PostgreSQL: row locks, so concurrent reviews of one agent, or by one reviewer, serialise.
 */
export async function lockAgentRows(db: Db, dids: readonly string[]): Promise<void> {
  for (const did of [...new Set(dids)].sort()) {
    await db
      .updateTable('agents')
      .set((eb) => ({ total_reviews: eb.ref('total_reviews') }))
      .where('did', '=', did)
      .execute();
  }
}

export async function insertReview(db: Db, row: NewReviewRow): Promise<void> {
  await db.insertInto('reviews').values(row).execute();
}

export async function findReview(db: Db, id: string): Promise<ReviewRow | undefined> {
  return db.selectFrom('reviews').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findReviewByPair(
  db: Db,
  reviewerDid: string,
  targetDid: string,
): Promise<ReviewRow | undefined> {
  return db
    .selectFrom('reviews')
    .selectAll()
    .where('reviewer_did', '=', reviewerDid)
    .where('target_did', '=', targetDid)
    .executeTakeFirst();
}

export async function updateReview(
  db: Db,
  id: string,
  patch: Pick<Updateable<ReviewsTable>, 'rating' | 'comment' | 'updated_at'>,
): Promise<void> {
  await db
    .updateTable('reviews')
    .set((eb) => ({ ...patch, edit_count: eb('edit_count', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

/** How many reviews a reviewer submitted after `since`, and when the oldest of them was submitted. */
export async function reviewsSubmittedSince(
  db: Db,
  reviewerDid: string,
  since: number,
): Promise<{ count: number; oldest: number | null }> {
  const row = await db
    .selectFrom('reviews')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min('created_at').as('oldest')])
    .where('reviewer_did', '=', reviewerDid)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), oldest: row.oldest === null ? null : Number(row.oldest) };
}

export type ReviewListFilter = { target_did: string } | { reviewer_did: string };

/** A page of reviews, newest first, and the exact total, read in one transaction so they agree. */
export async function listReviews(
  db: Db,
  filter: ReviewListFilter,
  limit: number,
  offset: number,
  /** Keyset paging: only reviews after this one in the list's order (newest first, then id). */
  after?: { createdAt: number; id: string },
): Promise<{ rows: ReviewRow[]; total: number }> {
  return db.transaction().execute(async (trx) => {
    const base =
      'target_did' in filter
        ? trx.selectFrom('reviews').where('target_did', '=', filter.target_did)
        : trx.selectFrom('reviews').where('reviewer_did', '=', filter.reviewer_did);
    const { total } = await base
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow();
    const page =
      after === undefined
        ? base
        : base.where((eb) =>
            eb.or([
              eb('created_at', '<', after.createdAt),
              eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
            ]),
          );
    const rows = await page
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    return { rows, total: Number(total) };
  });
}

/**
 * Every review of an agent with the evidence about its reviewer that reputation v2 weighs
 * (modules/reviews/reputation-model.ts), for recomputing the aggregates inside the review's transaction.
 */
export async function evidencedRatingsOf(db: Db, targetDid: string): Promise<EvidencedReview[]> {
  const { rows } = await sql<{
    rating: number;
    verified: number;
    created_at: number | string;
    reviewer_created_at: number | string;
    reviewer_score: number;
    reviewer_reviews: number | string;
    reciprocal: number | string;
    linked: number | string;
    partners: number | string;
  }>`select r.rating, r.verified, r.created_at,
      a.created_at as reviewer_created_at, a.reputation_score as reviewer_score,
      a.total_reviews as reviewer_reviews,
      (select count(*) from reviews back
        where back.reviewer_did = r.target_did and back.target_did = r.reviewer_did) as reciprocal,
      (select count(*) from identity_evidence mine
        join identity_evidence theirs on theirs.evidence = mine.evidence
        where mine.did = r.reviewer_did and theirs.did = r.target_did) as linked,
      (select count(*) from call_partners p
        where p.caller_did = r.reviewer_did and p.target_did <> r.target_did
          and exists (select 1 from agents pa where pa.did = p.target_did and pa.total_reviews > 0)
          and not exists (select 1 from call_partners q
            where q.caller_did = p.target_did and q.target_did = p.caller_did)) as partners
    from reviews r join agents a on a.did = r.reviewer_did
    where r.target_did = ${targetDid}`.execute(db);
  return rows.map((row) => ({
    rating: Number(row.rating),
    verified: Number(row.verified) === 1,
    createdAt: Number(row.created_at),
    reviewerCreatedAt: Number(row.reviewer_created_at),
    reviewerScore: Number(row.reviewer_score),
    reviewerRated: Number(row.reviewer_reviews) > 0,
    independentPartners: Number(row.partners),
    reciprocal: Number(row.reciprocal) > 0,
    linked: Number(row.linked) > 0,
  }));
}

/** Review counts by whole rating point (the floor of each rating: 9.99 -> 9, 10.00 -> 10). */
export async function ratingBuckets(
  db: Db,
  targetDid: string,
): Promise<{ bucket: number; count: number; verified: number }[]> {
  const rows = await db
    .selectFrom('reviews')
    .select((eb) => [
      sql<number>`rating / 100`.as('bucket'),
      eb.fn.countAll<number>().as('count'),
      eb.fn.sum<number>('verified').as('verified'),
    ])
    .where('target_did', '=', targetDid)
    .groupBy(sql`rating / 100`)
    .execute();
  return rows.map((row) => ({
    bucket: Number(row.bucket),
    count: Number(row.count),
    verified: Number(row.verified),
  }));
}

/**
 * Stores the aggregates when they changed, and returns whether they did. A change is stamped in the
 * change feed unless `stamp` is false: then the caller stamps it as the last step of its transaction
 * (a transaction that writes several agents must take the feed's lock after every agent row lock).
 */
export async function writeReputation(
  db: Db,
  did: string,
  aggregates: { average_rating: number; reputation_score: number; total_reviews: number },
  stamp = true,
): Promise<boolean> {
  const result = await db
    .updateTable('agents')
    .set(aggregates)
    .where('did', '=', did)
    .where((eb) =>
      eb.or([
        eb('average_rating', '<>', aggregates.average_rating),
        eb('reputation_score', '<>', aggregates.reputation_score),
        eb('total_reviews', '<>', aggregates.total_reviews),
      ]),
    )
    .executeTakeFirst();
  // Reputation is part of the public profile: a change that moves it is a change mirrors must see.
  const changed = result.numUpdatedRows > 0n;
  if (changed && stamp) await stampAgentChange(db, did, 'reputation');
  return changed;
}

/** DIDs of agents that have reviews, in DID order after `afterDid`, for the periodic refresh. */
export async function agentsWithReviews(db: Db, afterDid: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('agents')
    .select('did')
    .where('total_reviews', '>', 0)
    .where('did', '>', afterDid)
    .orderBy('did')
    .limit(limit)
    .execute();
  return rows.map((row) => row.did);
}

/** The task a verified review cites (the invocation issue owns writing tasks). */
export async function findCallRecord(
  db: Db,
  taskId: string,
): Promise<Pick<TasksTable, 'id' | 'caller_did' | 'target_did' | 'status'> | undefined> {
  return db
    .selectFrom('tasks')
    .select(['id', 'caller_did', 'target_did', 'status'])
    .where('id', '=', taskId)
    .executeTakeFirst();
}

export async function countReviews(db: Db): Promise<number> {
  const row = await db
    .selectFrom('reviews')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
