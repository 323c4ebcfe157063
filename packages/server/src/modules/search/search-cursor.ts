import { createHash } from 'node:crypto';
import { BadRequestError } from '../../kernel/errors.js';
import type { RankKey } from '@agent-registry/search-index';

/**
 * Opaque search cursors: where the last page ended, and a digest of the search it belongs to.
 * Keyset cursors hold the last agent's sort keys, so agents inserted meanwhile neither repeat nor
 * push others out of the next page. Searches the index does not serve (service-record sorts and
 * filters) page by position instead.
 */
export type SearchPosition = { kind: 'key'; key: RankKey } | { kind: 'offset'; offset: number };

interface CursorBody {
  v: 1;
  /** Digest of the search (filters, sort, order). */
  s: string;
  /** Keyset: [score, reputation, average_rating, total_reviews, created_at, did]. */
  k?: [number, number, number, number, number, string];
  /** Position: the offset of the next page. */
  o?: number;
}

export function searchDigest(search: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(search)).digest('base64url').slice(0, 16);
}

export function encodeSearchCursor(digest: string, position: SearchPosition): string {
  const body: CursorBody =
    position.kind === 'key'
      ? {
          v: 1,
          s: digest,
          k: [
            position.key.score,
            position.key.reputation,
            position.key.averageRating,
            position.key.totalReviews,
            position.key.createdAt,
            position.key.did,
          ],
        }
      : { v: 1, s: digest, o: position.offset };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

export function decodeSearchCursor(cursor: string, digest: string): SearchPosition {
  const body = parse(cursor);
  if (body.s !== digest) {
    throw invalidCursor(
      'cursor belongs to a different search: send the same q, capability, tags, filters, sort and order as the search that returned it',
    );
  }
  if (body.k !== undefined) {
    const [score, reputation, averageRating, totalReviews, createdAt, did] = body.k;
    return { kind: 'key', key: { score, reputation, averageRating, totalReviews, createdAt, did } };
  }
  return { kind: 'offset', offset: body.o as number };
}

const NOT_ISSUED =
  'cursor is not one this registry issued: pass next_cursor from a search response unchanged';

function parse(cursor: string): CursorBody {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor(NOT_ISSUED);
  }
  if (!isCursorBody(body)) {
    throw invalidCursor(
      isEarlierKeyset(body)
        ? 'cursor was issued before this registry ordered equal reputation scores by average rating and reviews: repeat the search without cursor and page again from the start'
        : NOT_ISSUED,
    );
  }
  return body;
}

/** A keyset cursor of the earlier form, [score, reputation, created_at, did], that a client passed on unchanged. */
function isEarlierKeyset(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  return body.v === 1 && Array.isArray(body.k) && body.k.length === 4;
}

function isCursorBody(value: unknown): value is CursorBody {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  if (body.v !== 1 || typeof body.s !== 'string') return false;
  if (body.k !== undefined) {
    const key = body.k;
    return (
      Array.isArray(key) &&
      key.length === 6 &&
      key.slice(0, 5).every((part) => typeof part === 'number' && Number.isFinite(part)) &&
      typeof key[5] === 'string'
    );
  }
  return typeof body.o === 'number' && Number.isSafeInteger(body.o) && body.o >= 0;
}

function invalidCursor(message: string): BadRequestError {
  return new BadRequestError('INVALID_CURSOR', message);
}
