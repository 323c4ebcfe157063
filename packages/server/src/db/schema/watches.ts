/** A subscription of an agent (owner) to the changes of a target: a DID or a remote entry id. */
export interface WatchesTable {
  id: string;
  owner_did: string;
  target: string;
  /** Where deliveries are POSTed (checked by the webhook network policy). */
  url: string;
  /** The Standard Webhooks signing secret (`whsec_<base64>`), shown once at creation. */
  secret: string;
  /** JSON array of the event types subscribed to. */
  events: string;
  created_at: number;
  /** Set when deleted; the row stays until it leaves the creation rate window. */
  deleted_at: number | null;
}

/** A delivery waiting to be sent (or retried): the message's id is the row's id. */
export interface WatchDeliveriesTable {
  id: string;
  watch_id: string;
  body: string;
  attempts: number;
  next_attempt_at: number;
  /** A node sending it holds it until then; past it, another may take it. */
  lease_until: number | null;
  created_at: number;
}

/** One row (id 1): the change feed number up to which changes were turned into deliveries. */
export interface WatchCursorTable {
  id: number;
  seq: number;
}

/** The availability status each watched agent was last announced with. */
export interface WatchAvailabilityTable {
  did: string;
  status: string;
  changed_at: number;
}

export type WatchesPartial = {
  watches: WatchesTable;
  watch_deliveries: WatchDeliveriesTable;
  watch_cursor: WatchCursorTable;
  watch_availability: WatchAvailabilityTable;
};
