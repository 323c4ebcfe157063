import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

/**
 * A followed peer's cursor kept every verified leaf hash (`leaf_hashes`); it now keeps the tree's
 * compact range (`range`: the roots of the complete subtrees along its right edge, largest first) and
 * the leaf hashes of the last, partly filled entry bundle (`partial_bundle`), so that a round's cost
 * no longer grows with the peer's log. The rewrite is the RFC 6962 hashing frozen here, not the protocol
 * package's follower: what this release's cursor holds stays what this migration wrote. A cursor that
 * is not of the earlier shape is left as it is (the follower's own check refuses one that is not whole).
 */
const TILE_WIDTH = 256;

const sha256 = (...parts: Buffer[]): Buffer => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};
const NODE_PREFIX = Buffer.of(1);

function compactRange(leafHashes: readonly Buffer[]): Buffer[] {
  const range: Buffer[] = [];
  leafHashes.forEach((leaf, size) => {
    let hash = leaf;
    for (let rest = size; rest % 2 === 1; rest = Math.floor(rest / 2)) {
      hash = sha256(NODE_PREFIX, range.pop() as Buffer, hash);
    }
    range.push(hash);
  });
  return range;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const sources = await sql<{ id: string; cursor: string }>`
    select id, cursor from remote_sources where kind = 'peer' and cursor is not null`.execute(db);
  for (const { id, cursor } of sources.rows) {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(cursor) as Record<string, unknown>;
    } catch {
      continue;
    }
    const { leaf_hashes: leafHashes, ...rest } = parsed;
    if (!Array.isArray(leafHashes) || typeof rest.size !== 'number') continue;
    const verified = (leafHashes as string[]).slice(0, rest.size).map((hash) => Buffer.from(hash, 'base64'));
    const partial = verified.length % TILE_WIDTH;
    const next = JSON.stringify({
      ...rest,
      range: compactRange(verified).map((hash) => hash.toString('base64')),
      partial_bundle: verified.slice(verified.length - partial).map((hash) => hash.toString('base64')),
    });
    await sql`update remote_sources set cursor = ${next} where id = ${id}`.execute(db);
  }
}
