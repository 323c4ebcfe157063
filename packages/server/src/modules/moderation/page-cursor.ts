import { createHash } from 'node:crypto';
import { BadRequestError } from '../../kernel/errors.js';

/** Page cursors of the moderation lists: the list they belong to (its filters) and the last row's key. */
export function encodePageCursor(list: string, key: string | number): string {
  return Buffer.from(JSON.stringify({ v: 1, l: listDigest(list), k: key })).toString('base64url');
}

export function decodePageCursor(cursor: string, list: string, kind: 'string'): string;
export function decodePageCursor(cursor: string, list: string, kind: 'number'): number;
export function decodePageCursor(cursor: string, list: string, kind: 'string' | 'number'): string | number {
  try {
    const body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      v?: unknown;
      l?: unknown;
      k?: unknown;
    };
    if (body.v === 1 && body.l === listDigest(list)) {
      if (kind === 'string' && typeof body.k === 'string' && body.k.length <= 64) return body.k;
      if (kind === 'number' && typeof body.k === 'number' && Number.isSafeInteger(body.k)) return body.k;
    }
  } catch {
    // answered below
  }
  throw new BadRequestError(
    'INVALID_CURSOR',
    'cursor must be a next_cursor returned for the same filters, unchanged (omit it for the first page)',
  );
}

function listDigest(list: string): string {
  return createHash('sha256').update(list).digest('base64url').slice(0, 16);
}
