import { Type, type Static } from '@sinclair/typebox';
import type { AgentStatus } from '../../db/schema/index.js';
import { PublishedProfile } from './schemas.js';
import { Provenance } from './provenance-schemas.js';
import { Nullable, ref, StringEnum } from '../../http/common-schemas.js';

/** GET /api/agents/changes: limits of one page. */
export const CHANGE_FEED_RULES = { limitDefault: 100, limitMax: 1000 } as const;

export const ChangeFeedQuery = Type.Object(
  {
    since: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'next_cursor of the previous page; omit to read the feed from its beginning',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: CHANGE_FEED_RULES.limitMax,
        default: CHANGE_FEED_RULES.limitDefault,
      }),
    ),
  },
  { additionalProperties: false },
);
export type ChangeFeedQuery = Static<typeof ChangeFeedQuery>;

export const AgentChange = Type.Object(
  {
    did: Type.String(),
    status: StringEnum<readonly AgentStatus[]>(['active', 'deactivated', 'suspended'], {
      description:
        'Extension value `suspended`: an operator suspended the agent (docs/moderation.md); like a deactivation it carries no profile, and a restoration brings the profile back',
    }),
    updated_at: Type.Integer({ description: 'The profile last changed at (epoch ms)' }),
    deactivated_at: Nullable(Type.Integer()),
    profile: Type.Union([ref(PublishedProfile), Type.Null()], {
      description: 'The profile while the agent is active; null for a deactivated agent (a tombstone)',
    }),
    provenance: ref(Provenance),
  },
  { $id: 'AgentChange' },
);
/**
 * One agent's latest change: its profile while active; a tombstone (no profile) once deactivated.
 * An agent changed several times since the cursor appears once, at its latest state and place.
 */
export type AgentChange = Static<typeof AgentChange>;

export const ChangePage = Type.Object({
  changes: Type.Array(ref(AgentChange), {
    description:
      'In commit order; each agent once, at its latest state (an agent changed twice since the cursor appears at its last change)',
  }),
  next_cursor: Type.String({
    description: 'Pass as since for the changes after this page (also when it is empty)',
  }),
  has_more: Type.Boolean({ description: 'More changes follow now; when false, poll later with next_cursor' }),
});
export type ChangePage = Static<typeof ChangePage>;
