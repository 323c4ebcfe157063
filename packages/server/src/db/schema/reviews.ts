/** One review per (reviewer, target); a unique index enforces it. */
export interface ReviewsTable {
  id: string;
  reviewer_did: string;
  target_did: string;
  /** Integer hundredths of a rating point (100-1000), so 1.13 is exact and sums never drift. */
  rating: number;
  comment: string | null;
  /** 1 when call_record_id names a completed task from the reviewer to the target. */
  verified: number;
  call_record_id: string | null;
  edit_count: number;
  created_at: number;
  updated_at: number;
}

export const reviewsTableName = 'reviews';
export type ReviewsPartial = { [reviewsTableName]: ReviewsTable };
