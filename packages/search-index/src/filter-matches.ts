import type { AgentSlots } from './agent-slots.js';
import { BitmapScope, type Bitmap } from './bitmap.js';
import { CAPABILITY_SPACE, TAG_SPACE } from './postings.js';
import type { Matches } from './relevance-context.js';
import type { IndexFilters } from './model.js';
import { FIELDS, stemWord } from './text.js';

/** Runs `use` with the filters' matches; the bitmaps it computed are freed when it returns. */
export function withMatches<T>(
  slots: AgentSlots,
  filters: IndexFilters,
  use: (scope: BitmapScope, matches: Matches) => T,
): T {
  const scope = new BitmapScope();
  try {
    return use(scope, matchesIn(slots, scope, filters));
  } finally {
    scope.dispose();
  }
}

/** The agents the filters match: the capability, any of the tags, and every query word in some field. */
function matchesIn(slots: AgentSlots, scope: BitmapScope, filters: IndexFilters): Matches {
  const words = filters.terms?.map(stemWord);
  const sets: Bitmap[] = [];
  if (filters.capability !== undefined)
    sets.push(slots.postings.term(scope, CAPABILITY_SPACE, filters.capability));
  if (filters.tags !== undefined) sets.push(slots.postings.anyTerm(scope, TAG_SPACE, filters.tags));
  const filtered = sets.length > 0;
  if (words === undefined || words.length === 0) {
    const matches = filtered ? scope.intersectAll(sets) : undefined;
    return { matches, fieldHits: [], stemIds: [], filtered };
  }
  // Every word but the last is one stem; the last is a prefix, and may begin several.
  const begun = slots.vocabulary.withPrefix(words[words.length - 1] as string);
  const stemIds = words.map((word, index) =>
    index < words.length - 1 ? slots.vocabulary.idOf(word) : begun.length === 1 ? begun[0] : undefined,
  );
  const fieldHits = words.map((word, index) =>
    index === words.length - 1 ? anyStemFieldHits(slots, scope, begun) : wordFieldHits(slots, scope, word),
  );
  const matches = scope.intersectAll([...fieldHits.map((hits) => scope.orMany(hits)), ...sets]);
  return { matches, fieldHits, stemIds, filtered };
}

/** Per field, the agents holding this exact stem. */
function wordFieldHits(slots: AgentSlots, scope: BitmapScope, stem: string): Bitmap[] {
  const stemId = slots.vocabulary.idOf(stem);
  return FIELDS.map((_, space) => slots.postings.word(scope, space, stemId));
}

/** Per field, the agents holding any of the stems (those a last word begins). */
function anyStemFieldHits(slots: AgentSlots, scope: BitmapScope, stemIds: readonly number[]): Bitmap[] {
  return FIELDS.map((_, space) => slots.postings.anyWord(scope, space, stemIds));
}
