import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AVAILABILITY_SLOT_MS,
  deriveAvailability,
  type ObservedAgent,
  type PresenceRecord,
} from '../../src/modules/availability/availability-model.js';

const QUEUE_AGENT: ObservedAgent = {
  status: 'active',
  invocation_enabled: true,
  delivery_mode: 'queue',
  webhook_probes: false,
};

/** An agent seen in every slot from `firstSlot` to `lastSeenSlot`, last at `lastSeenAt`. */
function presence(firstSlot: number, lastSeenAt: number, seenSlots: number): PresenceRecord {
  return {
    first_seen_at: firstSlot * AVAILABILITY_SLOT_MS,
    last_seen_at: lastSeenAt,
    online_since: firstSlot * AVAILABILITY_SLOT_MS,
    checked_at: lastSeenAt,
    seen_slots_24h: seenSlots,
    seen_slots_7d: seenSlots,
    stopped_at: null,
  };
}

describe('uptime and the slot in progress', () => {
  const slot = 1_000_000;
  const slotStart = slot * AVAILABILITY_SLOT_MS;

  test('a slot just begun, the agent not seen in it yet: it does not count as down', () => {
    // Seen in each of the three slots before, last 20 s ago; the new slot is 5 s old.
    const now = slotStart + 5_000;
    const availability = deriveAvailability(QUEUE_AGENT, presence(slot - 3, now - 20_000, 3), now);
    assert.equal(availability.status, 'online');
    assert.equal(availability.uptime_24h, 1);
    assert.equal(availability.uptime_7d, 1);
  });

  test('seen in the slot in progress, it counts as up', () => {
    const now = slotStart + 60_000;
    const availability = deriveAvailability(QUEUE_AGENT, presence(slot - 3, now - 1_000, 4), now);
    assert.equal(availability.uptime_24h, 1);
  });

  test('a slot missed before the one in progress still counts as down', () => {
    // Slots slot-3, slot-2 seen, slot-1 missed; the one in progress not seen yet: 2 of 3.
    const now = slotStart + 5_000;
    const availability = deriveAvailability(
      QUEUE_AGENT,
      presence(slot - 3, slotStart - 2 * AVAILABILITY_SLOT_MS + 10_000, 2),
      now,
    );
    assert.equal(availability.status, 'offline');
    assert.equal(availability.uptime_24h, 2 / 3);
  });

  test('first seen in the slot in progress: up all the time it has been watched', () => {
    const now = slotStart + 60_000;
    const availability = deriveAvailability(QUEUE_AGENT, presence(slot, now - 1_000, 1), now);
    assert.equal(availability.uptime_24h, 1);
  });
});
