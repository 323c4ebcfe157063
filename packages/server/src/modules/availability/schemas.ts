import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../http/common-schemas.js';

export const AvailabilityStatus = Type.Union(
  [Type.Literal('online'), Type.Literal('offline'), Type.Literal('unknown')],
  {
    description:
      'online: a worker was seen within the online window; offline: the agent was observed before but not within it, or is deactivated; unknown: never observed, or not observable (webhook and no-delivery agents, invocation disabled)',
  },
);
export type AvailabilityStatus = Static<typeof AvailabilityStatus>;

export const Availability = Type.Object(
  {
    status: AvailabilityStatus,
    last_seen_at: Nullable(
      Type.Integer({ description: 'Epoch ms of the latest evidence that a worker was there; null if never' }),
    ),
    checked_at: Nullable(
      Type.Integer({ description: 'Epoch ms at which the registry last recorded evidence; null if never' }),
    ),
    online_since: Nullable(
      Type.Integer({
        description: 'Epoch ms since which the agent has been online without a gap; null unless online',
      }),
    ),
    uptime_24h: Nullable(
      Type.Number({
        description:
          'Fraction 0-1 of the five-minute slots of the last 24 hours (since the first observation) in which a worker was seen; null if never observed',
      }),
    ),
    uptime_7d: Nullable(Type.Number({ description: 'The same over the last 7 days' })),
  },
  {
    $id: 'Availability',
    description:
      'Whether the agent answers now, measured by the registry from its workers\u2019 polls and task updates (docs/availability.md)',
    examples: [
      {
        status: 'online',
        last_seen_at: 1767225600000,
        checked_at: 1767225600000,
        online_since: 1767222000000,
        uptime_24h: 0.97,
        uptime_7d: 0.99,
      },
    ],
  },
);
export type Availability = Static<typeof Availability>;
