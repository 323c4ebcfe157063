import { BadRequestError } from '../../kernel/errors.js';
import type { SearchPage, SearchService } from '../search/search.js';
import { A2A_CARD_TYPE } from './entries.js';
import { narrow, type Narrowed } from './ard-query.js';
import { FACET_FIELDS, type ArdExploreRequest, type FacetField } from './schemas.js';

/** How many of the best matches name the tag and capability values an explore counts. */
const FACET_SAMPLE = 100;

/** What facet counting uses of the search. */
type FacetSearch = Pick<SearchService, 'count' | 'searchPage'>;

/** POST /explore's answer: facet counts over the matched set, by the search index. */
export async function exploreFacets(
  search: FacetSearch,
  publisher: string,
  body: ArdExploreRequest,
): Promise<Record<string, unknown>> {
  const narrowed = narrow(body.query?.text, body.query?.filter, publisher);
  const fields: FacetField[] = [];
  for (const facet of body.resultType.facets) {
    if (!(FACET_FIELDS as readonly string[]).includes(facet.field)) {
      throw new BadRequestError(
        'VALIDATION_FAILED',
        `facet field "${facet.field.slice(0, 64)}" is not supported; use one of ${FACET_FIELDS.join(', ')}`,
      );
    }
    if (fields.includes(facet.field as FacetField)) {
      throw new BadRequestError('VALIDATION_FAILED', `facet field "${facet.field}" is asked for twice`);
    }
    fields.push(facet.field as FacetField);
  }
  const total = narrowed.empty ? 0 : await search.count(narrowed.request);
  let sample: SearchPage | undefined;
  const facets: Record<string, unknown> = {};
  for (const facet of body.resultType.facets) {
    const limit = facet.limit ?? 20;
    const minCount = facet.minCount ?? 1;
    let counted: { value: string; count: number }[];
    if (facet.field === 'type') counted = [{ value: A2A_CARD_TYPE, count: total }];
    else if (facet.field === 'publisher') counted = [{ value: publisher, count: total }];
    else if (total === 0) counted = [];
    else {
      sample ??= await search.searchPage({ ...narrowed.request, limit: FACET_SAMPLE });
      counted = await countValues(search, facet.field as 'tags' | 'capabilities', narrowed.request, sample);
    }
    const kept = counted.filter((bucket) => bucket.count >= minCount).sort(byCount);
    const shown = kept.slice(0, limit);
    const result: Record<string, unknown> = { buckets: shown };
    if (facet.field === 'type' || facet.field === 'publisher') {
      result.otherCount = kept.slice(limit).reduce((sum, bucket) => sum + bucket.count, 0);
    }
    facets[facet.field] = result;
  }
  return { resultType: 'facets', facets };
}

/**
 * Counts over the whole matched set, by the index, for the tag or capability values found among the best
 * matches. The index filters on one capability and on any of several tags, so with a filter on the same
 * field the buckets are that filter's own values (docs/decisions/ard.md, "ARD: explore facets").
 */
async function countValues(
  search: FacetSearch,
  field: 'tags' | 'capabilities',
  request: Narrowed['request'],
  sample: SearchPage,
): Promise<{ value: string; count: number }[]> {
  let values: string[];
  if (field === 'tags' && request.tags !== undefined) values = request.tags.split(',');
  else if (field === 'capabilities' && request.capability !== undefined) values = [request.capability];
  else {
    const seen = new Set<string>();
    for (const row of sample.rows) {
      const listed =
        field === 'tags'
          ? (JSON.parse(row.tags) as string[])
          : (JSON.parse(row.capabilities) as { type: string }[]).map((capability) => capability.type);
      for (const value of listed) seen.add(value);
    }
    values = [...seen];
  }
  const counted: { value: string; count: number }[] = [];
  for (const value of values) {
    const count = await search.count(
      field === 'tags' ? { ...request, tags: value } : { ...request, capability: value },
    );
    counted.push({ value, count });
  }
  return counted;
}

function byCount(a: { value: string; count: number }, b: { value: string; count: number }): number {
  return b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0);
}
