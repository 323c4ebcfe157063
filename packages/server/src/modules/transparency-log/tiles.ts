/** C2SP tlog-tiles: tile geometry and path encoding (https://c2sp.org/tlog-tiles). */

export const TILE_WIDTH = 256;
/** Tile levels are 8 tree levels apart: one tile is a subtree of height 8. */
export const TILE_HEIGHT = 8;

/** A tile or entry bundle named by a path: level (undefined for entries), index, width (256 = full). */
export interface TileAddress {
  level: number | undefined;
  index: number;
  width: number;
}

/** `<L>` or `entries`, then `<N>` as `x`-prefixed 3-digit elements and a last bare one, then `.p/<W>`. */
const TILE_PATH = /^(entries|0|[1-9]\d?)\/((?:x\d{3}\/)*\d{3})(?:\.p\/([1-9]\d{0,2}))?$/;

/**
 * Parses `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]` (the part after `/log/tile/`), with `<N>` in
 * zero-padded 3-digit elements, all but the last starting with `x`, and no leading `x000`. Undefined
 * when malformed or not the one encoding tlog-tiles gives the index.
 */
export function parseTilePath(path: string): TileAddress | undefined {
  const match = TILE_PATH.exec(path);
  if (match === null) return undefined;
  const [, head = '', digits = '', givenWidth] = match;
  const level = head === 'entries' ? undefined : Number(head);
  const width = givenWidth === undefined ? TILE_WIDTH : Number(givenWidth);
  if ((level !== undefined && level > 63) || (givenWidth !== undefined && width > 255)) return undefined;
  const index = Number(digits.replace(/[x/]/g, ''));
  // One path per tile: a leading x000 element would name the same tile again, and be cached as immutable.
  if (!Number.isSafeInteger(index) || encodeTileIndex(index) !== digits) return undefined;
  return { level, index, width };
}

/** The path of tile `index` in the tlog-tiles encoding (`x001/x234/067`). */
export function encodeTileIndex(index: number): string {
  const elements: string[] = [];
  let rest = index;
  do {
    elements.unshift(String(rest % 1000).padStart(3, '0'));
    rest = Math.floor(rest / 1000);
  } while (rest > 0);
  return elements.map((element, i) => (i < elements.length - 1 ? `x${element}` : element)).join('/');
}

/** How many hashes tile `index` at `level` holds in a tree of `size` leaves (0: the tile does not exist). */
export function tileWidthAt(level: number, index: number, size: number): number {
  const hashesAtLevel = Math.floor(size / TILE_WIDTH ** level);
  return Math.max(0, Math.min(TILE_WIDTH, hashesAtLevel - index * TILE_WIDTH));
}
