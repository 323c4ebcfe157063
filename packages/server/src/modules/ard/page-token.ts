import { createHash } from 'node:crypto';
import { BadRequestError } from '../../kernel/errors.js';

/** Which listing a token continues: each refuses the others' tokens. */
export type PageKind = 'search' | 'list' | 'catalog';

/** Where the next page starts: the search's own cursor and the rank of its first entry. */
export interface PagePosition {
  cursor: string;
  rank: number;
}

const PREFIX = 'ard1.';
export const PAGE_TOKEN_MAX_LENGTH = 1024;

/** A short digest of a normalised request, so a token cannot continue a different search. */
export function requestDigest(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('base64url').slice(0, 16);
}

export function encodePageToken(kind: PageKind, digest: string, position: PagePosition): string {
  const body = JSON.stringify({ k: kind, d: digest, c: position.cursor, r: position.rank });
  return PREFIX + Buffer.from(body).toString('base64url');
}

function foreign(): BadRequestError {
  return new BadRequestError(
    'INVALID_CURSOR',
    'pageToken is not one this registry issued: pass the pageToken of the previous page unchanged, or start again without it',
  );
}

export function decodePageToken(token: string, kind: PageKind, digest: string): PagePosition {
  if (token.length > PAGE_TOKEN_MAX_LENGTH || !token.startsWith(PREFIX)) throw foreign();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw foreign();
  }
  const value = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const { k, d, c, r } = value;
  if (typeof c !== 'string' || typeof r !== 'number' || !Number.isInteger(r) || r < 0) throw foreign();
  if (k !== kind || d !== digest) {
    throw new BadRequestError(
      'INVALID_CURSOR',
      'pageToken belongs to a different request: send the same query, filter and pageSize as the page it came from, or start again without it',
    );
  }
  return { cursor: c, rank: r };
}
