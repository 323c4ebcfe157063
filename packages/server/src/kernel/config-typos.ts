import { SETTINGS } from './settings.js';

/** Every variable the registry reads: the declared settings. */
export function knownSettingNames(): string[] {
  return Object.keys(SETTINGS).sort();
}

/** Optimal string alignment distance: edits, with a swap of two neighbours counted as one (PROT -> PORT). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? 0;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** Longer names tolerate more typos; a four-letter name only one, so HOME is never taken for HOST. */
const tolerance = (name: string): number => (name.length <= 4 ? 1 : name.length <= 9 ? 2 : 3);

/**
 * Variables set in the environment that are not ours but look like one of ours (a typo such as PROT),
 * each with the name it probably meant. A setting with a typo is otherwise silently ignored.
 */
export function suspiciousSettings(
  env: Record<string, string | undefined>,
  known: readonly string[] = knownSettingNames(),
): { name: string; meant: string }[] {
  const knownSet = new Set(known);
  const found: { name: string; meant: string }[] = [];
  for (const name of Object.keys(env)) {
    if (knownSet.has(name)) continue;
    const upper = name.toUpperCase();
    let best: { meant: string; distance: number } | undefined;
    for (const candidate of known) {
      if (Math.abs(candidate.length - upper.length) > tolerance(candidate)) continue;
      const distance = upper === candidate ? 0 : editDistance(upper, candidate);
      if (distance <= tolerance(candidate) && (best === undefined || distance < best.distance))
        best = { meant: candidate, distance };
    }
    if (best !== undefined) found.push({ name, meant: best.meant });
  }
  return found;
}
