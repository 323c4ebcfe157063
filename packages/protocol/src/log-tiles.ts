import { LogVerificationError } from './log-errors.js';

/** The tlog-tiles layout of the log (https://c2sp.org/tlog-tiles): tile paths and entry bundles. */

/** tlog-tiles: N as 3-digit path elements, all but the last prefixed with x (1234067 is x001/x234/067). */
function tileIndex(index: number): string {
  const elements: string[] = [];
  let rest = index;
  do {
    elements.unshift(String(rest % 1000).padStart(3, '0'));
    rest = Math.floor(rest / 1000);
  } while (rest > 0);
  return elements.map((element, i) => (i < elements.length - 1 ? `x${element}` : element)).join('/');
}

/** Entries per tile (tlog-tiles). */
export const TILE_WIDTH = 256;

/** The path, relative to the log's prefix, of entry bundle `index` holding `width` entries. */
export const entryBundlePath = (index: number, width: number): string =>
  `tile/entries/${tileIndex(index)}${width < TILE_WIDTH ? `.p/${width}` : ''}`;

/** The path, relative to the log's prefix, of hash tile `index` of `level` holding `width` hashes. */
export const hashTilePath = (level: number, index: number, width: number): string =>
  `tile/${level}/${tileIndex(index)}${width < TILE_WIDTH ? `.p/${width}` : ''}`;

/**
 * The entries of a bundle (each a big-endian uint16 length, then that many bytes); a torn bundle is an
 * error. With `expected`, a bundle holding more entries is refused as soon as one too many is read.
 * Each entry is a copy: a kept entry never pins the whole (up to a mebibyte) bundle it came in.
 */
export function splitEntryBundle(bundle: Uint8Array, expected?: number): Uint8Array[] {
  const entries: Uint8Array[] = [];
  let at = 0;
  while (at < bundle.length) {
    if (at + 2 > bundle.length) throw new LogVerificationError('an entry bundle ends inside a length prefix');
    const length = ((bundle[at] ?? 0) << 8) | (bundle[at + 1] ?? 0);
    if (at + 2 + length > bundle.length)
      throw new LogVerificationError('an entry bundle ends inside an entry');
    if (expected !== undefined && entries.length === expected)
      throw new LogVerificationError(
        `an entry bundle holds more than the ${expected} entries its width names: an entry was added`,
      );
    entries.push(bundle.slice(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return entries;
}
