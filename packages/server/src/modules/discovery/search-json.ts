import type { AgentSearchRow } from './agent-search-store.js';
import type { SearchPage } from './search.js';

/**
 * GET /api/agents/search's body (the SearchResponse schema), written from the page's rows: an agent's
 * capabilities and tags go in as the JSON text the registry stored, instead of being parsed into objects
 * and serialised again, a round trip that cost CPU and garbage (docs/decisions.md, "A search's body from
 * the stored JSON"). The stored text is the registry's own `JSON.stringify` of validated values
 * (modules/agents/profile-rules.ts, normaliseCapability), with the keys in the schema's order, so the
 * bytes are those the schema's serializer writes for the parsed objects; test/http/search-json.test.ts holds
 * the two to the same output.
 */
export function searchResponseJson(page: SearchPage): string {
  let agents = '';
  for (const row of page.rows) {
    if (agents !== '') agents += ',';
    agents += agentJson(row);
  }
  return (
    `{"agents":[${agents}],"total":${integer(page.total)},"limit":${integer(page.limit)},` +
    `"offset":${integer(page.offset)},"next_cursor":${page.next_cursor === null ? 'null' : JSON.stringify(page.next_cursor)}}`
  );
}

function agentJson(row: AgentSearchRow): string {
  return (
    `{"did":${JSON.stringify(row.did)},"name":${JSON.stringify(row.name)},` +
    `"description":${row.description === null ? 'null' : JSON.stringify(row.description)},` +
    `"capabilities":${row.capabilities},"tags":${row.tags},` +
    `"reputation_score":${number(row.reputation_score)},"average_rating":${number(row.average_rating)},` +
    `"total_reviews":${integer(row.total_reviews)},"created_at":${integer(Number(row.created_at))},` +
    `"status":"active"}`
  );
}

/** As the schema serializer writes a `number`: infinities as null (NaN never comes out of a column). */
function number(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/** As the schema serializer writes an `integer`: a fraction is truncated. */
function integer(value: number): string {
  return String(Number.isInteger(value) ? value : Math.trunc(value));
}
