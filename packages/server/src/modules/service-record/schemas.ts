import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../http/common-schemas.js';

const Window = Type.Object({
  days: Type.Integer({ description: 'Window length in UTC days, today included' }),
  invocations: Type.Integer({ description: 'Finished brokered invocations (completed + failed + timeouts)' }),
  completed: Type.Integer(),
  failed: Type.Integer({ description: 'The agent reported failure, or its webhook could not take the task' }),
  timeouts: Type.Integer(),
  success_rate: Nullable(
    Type.Number({ description: 'completed / invocations, 0-1; null without invocations' }),
  ),
  timeout_rate: Nullable(Type.Number({ description: 'timeouts / invocations, 0-1' })),
  latency_p50_ms: Nullable(
    Type.Number({
      description: 'Median time from invocation to result of completed calls, from a histogram',
    }),
  ),
  latency_p95_ms: Nullable(Type.Number()),
  distinct_callers: Type.Integer({ description: 'Distinct caller DIDs (exact)' }),
  last_completed_at: Nullable(
    Type.Integer({ description: 'Epoch ms of the last completed call in the window' }),
  ),
});
export type WindowSummary = Static<typeof Window>;

const AllTime = Type.Object({
  invocations: Type.Integer(),
  completed: Type.Integer(),
  failed: Type.Integer(),
  timeouts: Type.Integer(),
  success_rate: Nullable(Type.Number()),
  last_completed_at: Nullable(Type.Integer()),
});
export type AllTimeSummary = Static<typeof AllTime>;

export const ServiceRecord = Type.Object(
  {
    measured_by: Type.Literal('registry'),
    last_7_days: Window,
    last_30_days: Window,
    all_time: AllTime,
    capabilities: Type.Array(
      Type.Object({
        capability: Type.String(),
        last_7_days: Window,
        last_30_days: Window,
        all_time: AllTime,
      }),
    ),
    uptime_24h: Type.Optional(
      Nullable(
        Type.Number({
          description:
            'Extension: the agent\u2019s uptime over the last 24 hours as its availability measures it (per agent, not per capability); null if never observed',
          examples: [0.97],
        }),
      ),
    ),
    uptime_7d: Type.Optional(
      Nullable(Type.Number({ description: 'Extension: the same over the last 7 days', examples: [0.99] })),
    ),
  },
  {
    $id: 'ServiceRecord',
    description:
      'What the agent did for its callers through the registry broker, measured by the registry (docs/service-record.md). Calls by the agent itself or by identities linked to it are not counted.',
  },
);
export type ServiceRecord = Static<typeof ServiceRecord>;
