import { Type } from '@sinclair/typebox';
import { SEARCH_RULES } from '../kernel/discovery-rules.js';
import { LIMITS } from '../kernel/limits.js';
import { forValidation } from '../http/validation.js';
import { SearchQuery } from '../modules/search/search-schemas.js';
import type { SearchRequest } from '../modules/search/search-schemas.js';
import { ArgumentValidator, selfContained } from './schemas.js';

/**
 * A search as the MCP tool and the search page take it: the REST query's rules, with tags as a JSON
 * array (the search service takes the comma-separated form of the REST query).
 */
export const SearchArguments = Type.Object({
  ...SearchQuery.properties,
  tags: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.tagMaxLength }), {
      minItems: 1,
      maxItems: SEARCH_RULES.tagsMaxCount,
      description: 'An agent matches if it has any of these tags (case-insensitive)',
    }),
  ),
  // A JSON boolean, as a model sends it, or the query's string form (the search page's form sends that).
  available: Type.Optional(
    Type.Unsafe<boolean | 'true' | 'false'>({
      enum: [true, false, 'true', 'false'],
      description:
        'true (or "true") returns only agents whose availability.status is online now (docs/availability.md); false, the default, filters nothing',
    }),
  ),
});

// Rules the service checks itself (x-checked-by-service) are left to it, as on REST.
const searchArguments = new ArgumentValidator<
  Omit<SearchRequest, 'tags' | 'available'> & { tags?: string[]; available?: boolean | 'true' | 'false' }
>(forValidation(selfContained(SearchArguments)));

/** The search the arguments ask for, or a 400 VALIDATION_FAILED naming the argument and its rule. */
export function parseSearchArguments(args: unknown): SearchRequest {
  const { tags, available, ...rest } = searchArguments.parse(args);
  const query: SearchRequest =
    available === undefined ? rest : { ...rest, available: String(available) as 'true' | 'false' };
  return tags === undefined ? query : { ...query, tags: tags.join(',') };
}
