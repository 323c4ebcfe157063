import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../http/common-schemas.js';

/** The events a watch may subscribe to: the agent ones for a DID, the entry ones for a remote entry id. */
export const AGENT_WATCH_EVENTS = [
  'agent.updated',
  'agent.deactivated',
  'agent.availability_changed',
] as const;
export const ENTRY_WATCH_EVENTS = ['entry.tools_changed', 'entry.status_changed'] as const;
export const WATCH_EVENT_TYPES = [...AGENT_WATCH_EVENTS, ...ENTRY_WATCH_EVENTS] as const;
export type WatchEventType = (typeof WATCH_EVENT_TYPES)[number];

/** Bounds of a watch's input. */
export const WATCH_RULES = {
  targetMaxLength: 512,
  urlMaxLength: 2048,
  idMaxLength: 64,
  cursorMaxLength: 256,
  pageDefault: 50,
  pageMax: 200,
} as const;

export const CreateWatchRequest = Type.Object(
  {
    target: Type.String({
      minLength: 1,
      maxLength: WATCH_RULES.targetMaxLength,
      description: "An agent's DID (local) or a remote entry id (GET /api/federation/entries)",
    }),
    url: Type.String({
      minLength: 1,
      maxLength: WATCH_RULES.urlMaxLength,
      description: 'https:// URL the deliveries are POSTed to (public addresses only)',
    }),
    events: Type.Array(StringEnum(WATCH_EVENT_TYPES), {
      minItems: 1,
      maxItems: WATCH_EVENT_TYPES.length,
      uniqueItems: true,
      description: 'The event types to receive: agent.* for a DID, entry.* for a remote entry',
    }),
  },
  { additionalProperties: false },
);
export type CreateWatchRequest = Static<typeof CreateWatchRequest>;

export const Watch = Type.Object({
  id: Type.String(),
  target: Type.String(),
  url: Type.String(),
  events: Type.Array(StringEnum(WATCH_EVENT_TYPES)),
  created_at: Type.Integer({ description: 'Milliseconds since the epoch' }),
});
export type Watch = Static<typeof Watch>;

export const CreatedWatch = Type.Intersect([
  Watch,
  Type.Object({
    secret: Type.String({
      description:
        'The Standard Webhooks signing secret (whsec_<base64>) of this watch: shown once, keep it to verify deliveries',
    }),
  }),
]);
export type CreatedWatch = Static<typeof CreatedWatch>;

export const WatchesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: WATCH_RULES.pageMax })),
    cursor: Type.Optional(
      Type.String({
        maxLength: WATCH_RULES.cursorMaxLength,
        description: 'next_cursor of the previous page',
      }),
    ),
  },
  { additionalProperties: false },
);
export type WatchesQuery = Static<typeof WatchesQuery>;

export const WatchesPage = Type.Object({
  watches: Type.Array(Watch),
  next_cursor: Nullable(
    Type.String({ description: 'Pass as cursor for the next page; null after the last' }),
  ),
});
export type WatchesPage = Static<typeof WatchesPage>;

export const WatchIdParams = Type.Object({
  id: Type.String({ maxLength: WATCH_RULES.idMaxLength }),
});
