import { OBSERVED_STATUSES } from '@agent-registry/protocol';
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../http/common-schemas.js';

export { Observed } from '../search/observed-schema.js';

export const OBSERVATION_RULES = { listLimitDefault: 50, listLimitMax: 200 } as const;

export const ObservationsQuery = Type.Object(
  {
    cursor: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,16}$',
        description: 'next_cursor of the previous page',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: OBSERVATION_RULES.listLimitMax,
        default: OBSERVATION_RULES.listLimitDefault,
      }),
    ),
  },
  { additionalProperties: false },
);
export type ObservationsQuery = Static<typeof ObservationsQuery>;

export const Observation = Type.Object({
  observed_at: Type.Integer({ description: 'The probe that found the change (epoch ms)' }),
  status: StringEnum(OBSERVED_STATUSES),
  tools_count: Nullable(Type.Integer()),
  tools_digest: Nullable(
    Type.String({ description: 'The digest the probe computed; null when it got no tools list' }),
  ),
  log_seq: Type.Integer({
    description: 'The `seq` of the `entry.observed` leaf that records this change (docs/transparency-log.md)',
  }),
  log_index: Type.Integer({
    description: "That leaf's index in the transparency log (log_seq minus the log's first number)",
  }),
});
export type Observation = Static<typeof Observation>;

export const ObservationsPage = Type.Object({
  observations: Type.Array(Observation, { description: 'Newest first' }),
  next_cursor: Nullable(
    Type.String({ description: 'Pass as cursor for the next page; null after the last' }),
  ),
});
export type ObservationsPage = Static<typeof ObservationsPage>;
