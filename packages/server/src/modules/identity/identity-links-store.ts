import { sql } from 'kysely';
import { compiledOnce } from '../../db/compiled.js';
import type { Db } from '../../db/connect.js';

/** Records a piece of operator evidence for an agent; the same evidence on two agents links them. */
export async function addIdentityEvidence(db: Db, did: string, evidence: string, now: number): Promise<void> {
  await db
    .insertInto('identity_evidence')
    .values({ did, evidence, created_at: now })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

const sharedEvidence = compiledOnce(
  (db, a: string, b: string) =>
    db
      .selectFrom('identity_evidence as mine')
      .innerJoin('identity_evidence as theirs', 'theirs.evidence', 'mine.evidence')
      .select('mine.did')
      .where('mine.did', '=', a)
      .where('theirs.did', '=', b)
      .limit(sql.lit(1)),
  ['\u0000a', '\u0000b'] as const,
);

/** Whether the two agents share any operator evidence. */
export async function areLinked(db: Db, a: string, b: string): Promise<boolean> {
  if (a === b) return true;
  return (await sharedEvidence(db, a, b)).length > 0;
}

/** The agents linked to `did` (not itself). */
export async function linkedAgents(db: Db, did: string): Promise<string[]> {
  const rows = await db
    .selectFrom('identity_evidence as mine')
    .innerJoin('identity_evidence as theirs', 'theirs.evidence', 'mine.evidence')
    .select('theirs.did')
    .distinct()
    .where('mine.did', '=', did)
    .where('theirs.did', '!=', did)
    .execute();
  return rows.map((row) => row.did);
}
