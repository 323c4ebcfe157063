export {
  SearchIndex,
  type IndexFilters,
  type IndexPage,
  type IndexQuery,
  type IndexSort,
  type IndexedAgent,
  type RankKey,
  type RelevanceTuning,
} from './search-index.js';
export { FIELDS, FIELD_WEIGHTS, fullTextTerms, indexWords, searchKey, stemWord, type Field } from './text.js';
