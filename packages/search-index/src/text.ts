import { stemmer } from 'stemmer';

/**
 * Words of a query: letters and digits (and marks), NFKC, lower-cased, each once; punctuation is a
 * separator. A word that is nothing once diacritics are folded (combining marks alone) is dropped.
 */
export function fullTextTerms(query: string): string[] {
  const words = query.normalize('NFKC').toLowerCase().match(WORD) ?? [];
  return [...new Set(words)].filter((word) => foldDiacritics(word) !== '');
}

/** The form capability and tag filters compare: NFKC, trimmed, lower-case ("Translation" finds "translation"). */
export function searchKey(value: string): string {
  return value.normalize('NFKC').trim().toLowerCase();
}

/**
 * Words as the search index keeps them: the query's own tokenisation (letters, digits, marks; NFKC,
 * lower case; see fullTextTerms), diacritics folded (a word of marks alone is none), then Porter-stemmed,
 * so "Translations" and "translating" meet at "translat" as they did in SQLite's FTS5 porter tokenizer.
 */
export function indexWords(text: string): string[] {
  const words = text.normalize('NFKC').toLowerCase().match(WORD);
  if (words === null) return [];
  const found = new Set<string>();
  for (const word of words) {
    const stem = stemWord(word);
    if (stem !== '') found.add(stem);
  }
  return [...found];
}

/** The query's word pattern (fullTextTerms). */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/** "Crème" -> "Creme": what FTS5's remove_diacritics did. */
function foldDiacritics(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '');
}

const stems = new Map<string, string>();
/** Distinct words remembered; a registry's vocabulary is far smaller, this only bounds a flood. */
const STEMS_REMEMBERED = 500_000;

export function stemWord(word: string): string {
  // Plain ASCII needs no folding; letters and digits mixed (a name's serial, "v2") are kept whole.
  if (ASCII_LETTERS.test(word)) return rememberedStem(word, word);
  if (ASCII_WORD.test(word)) return word;
  const folded = foldDiacritics(word);
  // The Porter rules are for English letters; other scripts are kept as written.
  return ASCII_LETTERS.test(folded) ? rememberedStem(word, folded) : folded;
}

const ASCII_LETTERS = /^[a-z]+$/;
const ASCII_WORD = /^[a-z0-9]+$/;

function rememberedStem(word: string, letters: string): string {
  const known = stems.get(word);
  if (known !== undefined) return known;
  const stem = stemmer(letters);
  if (stems.size >= STEMS_REMEMBERED) stems.clear();
  stems.set(word, stem);
  return stem;
}

/** The fields of an agent's document, in the order their postings and weights are kept. */
export const FIELDS = ['name', 'description', 'capabilities', 'tags'] as const;
export type Field = (typeof FIELDS)[number];

/**
 * What a query word found in a field is worth. A word in the name counts most; how often it repeats
 * does not count at all, so stuffing a description with a keyword buys nothing.
 */
export const FIELD_WEIGHTS: Record<Field, number> = { name: 10, description: 2, capabilities: 5, tags: 5 };
