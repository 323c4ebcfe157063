export { SearchIndex } from './search-index.js';
export type {
  IndexFilters,
  IndexPage,
  IndexQuery,
  IndexSort,
  IndexedAgent,
  RankKey,
  RelevanceTuning,
} from './model.js';
export { FIELDS, FIELD_WEIGHTS, fullTextTerms, indexWords, searchKey, stemWord, type Field } from './text.js';
