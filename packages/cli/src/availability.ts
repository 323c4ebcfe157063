/** What the registry says of whether an agent answers now (a profile's or a search hit's availability). */
export interface AvailabilityView {
  status: 'online' | 'offline' | 'unknown';
  last_seen_at: number | null;
}

/** "5 s", "3 min", "2 h", "4 d": how long ago, coarse enough to read at a glance. */
function ago(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.round(hours / 24)} d`;
}

/** e.g. "online (seen 4 s ago)", "offline (last seen 3 h ago)", "unknown (never seen)". */
export function describeAvailability(availability: AvailabilityView, now = Date.now()): string {
  const seen = availability.last_seen_at;
  if (seen === null) return `${availability.status} (never seen)`;
  const when = `${ago(now - seen)} ago`;
  return availability.status === 'online'
    ? `online (seen ${when})`
    : `${availability.status} (last seen ${when})`;
}
