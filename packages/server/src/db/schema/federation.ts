/**
 * Read-only entries of agents that live elsewhere (modules/federation/): mirrored from a peer registry's
 * log or imported from an A2A agent card or an MCP Registry. Never rows of `agents`: they hold no key
 * proven here, take no reviews and cannot be invoked here.
 */
export interface RemoteEntriesTable {
  /** The entry's key, never a DID (it may be the same agent a local or another source's entry names). */
  id: string;
  /** The federation source (remote_sources.id) the entry came from. */
  source_id: string;
  kind: 'mirrored' | 'imported';
  /** The agent's DID where its source names one. */
  did: string | null;
  name: string;
  description: string | null;
  /** JSON text, in the profile's capability shape. */
  capabilities: string;
  /** JSON text. */
  tags: string;
  /** JSON text: [{type, url}] where the agent is reached at its home. */
  endpoints: string;
  /** The public URL of the registry (or card origin) the agent lives at. */
  home_registry: string;
  /** JSON text of the Provenance object (modules/agents/provenance-schemas.ts). */
  provenance: string;
  /**
   * active (listed), removed (its source no longer lists it), shadowed: kept but never listed, as its
   * DID is registered here or another source owns it (docs/federation.md, "Whose DID"), or suspended by
   * the operator (docs/moderation.md): never listed, whatever its source sends, until restored.
   */
  status: 'active' | 'removed' | 'shadowed' | 'suspended';
  created_at: number;
  updated_at: number;
  /** Remote change number: the federated search index follows it as the local index follows change_seq. */
  seq: number;
  /**
   * JSON text of a mirrored entry's HomeReport (modules/search/home-report-schema.ts): reputation, rating
   * and review count as the home's verified log leaf carried them; null for imported entries.
   */
  home_report: string | null;
}

/** One row per peer or import the operator configured: where it stands and its last error. */
export interface RemoteSourcesTable {
  id: string;
  kind: 'peer' | 'a2a' | 'mcp';
  url: string;
  /** ok, error (last attempt failed, entries kept), stopped (a peer's log forked or mismatched). */
  state: 'ok' | 'error' | 'stopped';
  last_error: string | null;
  last_attempt_at: number | null;
  last_success_at: number | null;
  /** JSON text: what the next fetch needs (ETag, updated_since, verified checkpoint). */
  cursor: string | null;
}

export const remoteEntriesTableName = 'remote_entries';
export const remoteSourcesTableName = 'remote_sources';
export type FederationPartial = {
  [remoteEntriesTableName]: RemoteEntriesTable;
  [remoteSourcesTableName]: RemoteSourcesTable;
};
