import { FIELDS, FIELD_WEIGHTS } from './text.js';

/**
 * A word's level in an agent: what the word scores there, the sum of the weights of the fields
 * (bit i of a mask is FIELDS[i]) that hold it. Relevance sums the levels of a query's words.
 */
export function maskScore(mask: number): number {
  return FIELDS.reduce((sum, field, index) => sum + (mask & (1 << index) ? FIELD_WEIGHTS[field] : 0), 0);
}

const MASKS = Array.from({ length: (1 << FIELDS.length) - 1 }, (_, index) => index + 1);

/** Every level a word can have in an agent that holds it, ascending. */
export const LEVEL_SCORES: readonly number[] = [...new Set(MASKS.map(maskScore))].sort((a, b) => a - b);

/** The position of a level's score in LEVEL_SCORES. */
export function levelIndex(score: number): number {
  const index = LEVEL_SCORES.indexOf(score);
  if (index < 0) throw new Error(`search index: no word scores ${score}`);
  return index;
}

/** The masks of each level, by position in LEVEL_SCORES. */
export const MASKS_OF_LEVEL: readonly (readonly number[])[] = LEVEL_SCORES.map((score) =>
  MASKS.filter((mask) => maskScore(mask) === score),
);

/** The position in LEVEL_SCORES of each mask's level, looked up by mask. */
export const LEVEL_OF_MASK: readonly number[] = [-1, ...MASKS.map((mask) => levelIndex(maskScore(mask)))];

/**
 * The word in the description and nowhere else: most of an agent's words are only there, so the
 * index keeps no level list for it (it would double the index's lists); a search computes it from
 * the field lists when it needs it.
 */
export const DESCRIPTION_ONLY = 1 << FIELDS.indexOf('description');

/** The level of the description alone (see DESCRIPTION_ONLY), as a position in LEVEL_SCORES. */
export const DESCRIPTION_ONLY_LEVEL = levelIndex(maskScore(DESCRIPTION_ONLY));
