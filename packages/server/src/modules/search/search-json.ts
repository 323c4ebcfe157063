import { hitAvailability, type SearchPage, type SearchRow } from './search.js';
import { provenanceJson, registeredProvenance } from '../agents/provenance-schemas.js';
import type { HomeReport } from './home-report-schema.js';
import { capabilitiesDigestOf } from './capabilities-digest.js';

/**
 * GET /api/agents/search's body (the SearchResponse schema), written from the page's rows: an agent's
 * capabilities and tags go in as the JSON text the registry stored, instead of being parsed into objects and
 * serialised again, a round trip that cost CPU and garbage (docs/decisions/performance.md, "A search's body
 * from the stored JSON"). The stored text is the registry's own `JSON.stringify` of validated values
 * (modules/agents/profile-rules.ts, normaliseCapability), with the keys in the schema's order, so the bytes
 * are those the schema's serializer writes for the parsed objects; test/http/search/search-json.test.ts holds the
 * two to the same output.
 */
export function searchResponseJson(page: SearchPage): string {
  let agents = '';
  const home = `"home_registry":${JSON.stringify(page.home_registry)},"provenance":${registeredJson(page.home_registry)}`;
  for (const row of page.rows) {
    if (agents !== '') agents += ',';
    agents += agentJson(row, home, page.availability, page.domains);
  }
  return (
    `{"agents":[${agents}],"total":${integer(page.total)},"limit":${integer(page.limit)},` +
    `"offset":${integer(page.offset)},"next_cursor":${page.next_cursor === null ? 'null' : JSON.stringify(page.next_cursor)}}`
  );
}

/** The registered provenance as JSON, written once per registry (its public URL does not change). */
let registered: { home: string; json: string } | undefined;
function registeredJson(home: string): string {
  if (registered?.home !== home) registered = { home, json: provenanceJson(registeredProvenance(home)) };
  return registered.json;
}

/** `home` is the home_registry and provenance members of the registry's own agents. */
function agentJson(
  row: SearchRow,
  home: string,
  availability: SearchPage['availability'],
  domains: SearchPage['domains'],
): string {
  const { status, last_seen_at: seenAt } = hitAvailability(row, availability);
  // Members after provenance, in the schema's order: availability, then a local agent's capabilities
  // digest or a probed entry's observation.
  const origin =
    row.remote === undefined
      ? home
      : `"home_registry":${JSON.stringify(row.remote.home_registry)},"provenance":${row.remote.provenance}`;
  const held = row.remote === undefined ? domains.get(row.did) : undefined;
  const extra =
    (row.remote === undefined
      ? `,"capabilities_digest":"${capabilitiesDigestOf(row.capabilities)}"`
      : (row.remote.observed === undefined ? '' : `,"observed":${JSON.stringify(row.remote.observed)}`) +
        (row.remote.home === undefined ? '' : `,"home":${homeJson(row.remote.home)}`)) +
    (held === undefined ? '' : `,"domains":${JSON.stringify(held)}`);
  return (
    `{"did":${JSON.stringify(row.did)},"name":${JSON.stringify(row.name)},` +
    `"description":${row.description === null ? 'null' : JSON.stringify(row.description)},` +
    `"capabilities":${row.capabilities},"tags":${row.tags},` +
    `"reputation_score":${number(row.reputation_score)},"average_rating":${number(row.average_rating)},` +
    `"total_reviews":${integer(row.total_reviews)},"created_at":${integer(Number(row.created_at))},` +
    `"status":"active",${origin},` +
    `"availability":{"status":"${status}","last_seen_at":${seenAt === null ? 'null' : integer(seenAt)}}${extra}}`
  );
}

/** As the schema serializer writes a `number`: infinities as null (NaN never comes out of a column). */
function number(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/** A HomeReport as the schema serializer writes it: its members in the schema's order. */
function homeJson(home: HomeReport): string {
  return (
    `{"reported_by":${JSON.stringify(home.reported_by)},"reputation_score":${number(home.reputation_score)},` +
    `"average_rating":${number(home.average_rating)},"total_reviews":${integer(home.total_reviews)},` +
    `"read_at":${integer(home.read_at)}` +
    (home.availability === undefined
      ? ''
      : `,"availability":{"status":${JSON.stringify(home.availability.status)},"last_seen_at":${nullable(home.availability.last_seen_at, integer)}}`) +
    (home.service_record === undefined
      ? ''
      : `,"service_record":{"invocations_30d":${integer(home.service_record.invocations_30d)},` +
        `"success_rate_30d":${nullable(home.service_record.success_rate_30d, number)},` +
        `"latency_p50_ms_30d":${nullable(home.service_record.latency_p50_ms_30d, number)},` +
        `"uptime_24h":${nullable(home.service_record.uptime_24h, number)}}`) +
    (home.checked_at === undefined ? '' : `,"checked_at":${integer(home.checked_at)}`) +
    '}'
  );
}

function nullable(value: number | null, write: (value: number) => string): string {
  return value === null ? 'null' : write(value);
}

/** As the schema serializer writes an `integer`: a fraction is truncated. */
function integer(value: number): string {
  return String(Number.isInteger(value) ? value : Math.trunc(value));
}
