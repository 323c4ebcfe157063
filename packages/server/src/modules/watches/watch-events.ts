import type { WatchEventType } from './schemas.js';

/**
 * An event watches announce. `target` is what a watch names: a DID for agent events, a remote entry id
 * for entry events; `time` is when it happened (milliseconds). The data of each type is what a
 * receiver needs to act (then it reads the agent or entry itself).
 */
export type WatchEvent =
  | {
      type: 'agent.updated';
      target: string;
      time: number;
      /** The change feed number of the change, and what it was (a profile change or a reputation change). */
      data: { seq: number; change: 'update' | 'reputation'; updated_at: number };
    }
  | { type: 'agent.deactivated'; target: string; time: number; data: { seq: number; updated_at: number } }
  | {
      type: 'agent.availability_changed';
      target: string;
      time: number;
      data: { status: string; previous_status: string };
    }
  | {
      type: 'entry.tools_changed';
      target: string;
      time: number;
      /** The entry's tools digest before and after (sha256:<hex>), and how many tools it lists now. */
      data: { tools_digest: string; previous_tools_digest: string | null; tools_count: number };
    }
  | {
      type: 'entry.status_changed';
      target: string;
      time: number;
      /** The observed status class before and after (answers, needs_auth, not_mcp, not_a2a, unreachable). */
      data: { status: string; previous_status: string | null };
    };

/** The body of a delivery: a Standard Webhooks payload (type, timestamp, data). */
export interface WatchMessageBody {
  type: WatchEventType;
  /** ISO 8601: when the event happened (not when this attempt was made). */
  timestamp: string;
  data: { watch_id: string; target: string } & Record<string, unknown>;
}

export function messageBody(event: WatchEvent, watchId: string): string {
  const body: WatchMessageBody = {
    type: event.type,
    timestamp: new Date(event.time).toISOString(),
    data: { watch_id: watchId, target: event.target, ...event.data },
  };
  return JSON.stringify(body);
}

/** Availability status of agents, as their profiles say it (agents never observed are left out). */
export type AvailabilityStatuses = (dids: readonly string[]) => Promise<Map<string, string>>;
