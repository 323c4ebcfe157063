import { Type, type Static } from '@sinclair/typebox';
import { MODERATION_REASONS, RESTORATION_REASONS } from '@agent-registry/protocol';
import { Nullable, StringEnum } from '../../http/common-schemas.js';

/** Bounds of moderation input. */
export const MODERATION_RULES = {
  targetMaxLength: 512,
  detailsMaxLength: 2000,
  noteMaxLength: 500,
  statementMaxLength: 2000,
  taskIdMaxLength: 64,
  cursorMaxLength: 256,
  pageDefault: 50,
  pageMax: 200,
} as const;

const Target = Type.String({
  minLength: 1,
  maxLength: MODERATION_RULES.targetMaxLength,
  description: "An agent's DID or a remote entry id (GET /api/federation/entries)",
});

export const ReportRequest = Type.Object(
  {
    target: Target,
    reason: StringEnum(MODERATION_REASONS, {
      description: 'malware, impersonation, spam, broken (does not do what it says) or other',
    }),
    details: Type.Optional(
      Type.String({
        maxLength: MODERATION_RULES.detailsMaxLength,
        description: 'What the reporter saw; read by the operator only',
      }),
    ),
    task_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MODERATION_RULES.taskIdMaxLength,
        description: 'A task in which the reporter invoked the target: the report is then verified',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ReportRequest = Static<typeof ReportRequest>;

export const REPORT_STATES = ['open', 'actioned'] as const;

export const Report = Type.Object({
  id: Type.String(),
  reporter_did: Type.String(),
  target: Type.String(),
  reason: StringEnum(MODERATION_REASONS),
  details: Nullable(Type.String()),
  task_id: Nullable(Type.String()),
  verified: Type.Boolean({ description: 'The report names a task of the reporter with the target' }),
  state: StringEnum(REPORT_STATES, {
    description: 'open, or actioned once the target was suspended after the report',
  }),
  created_at: Type.Integer({ description: 'Milliseconds since the epoch' }),
});
export type Report = Static<typeof Report>;

/** What a reporter is answered: its report's id and state, never the other reports of the target. */
export const ReportReceipt = Type.Object({
  id: Type.String(),
  target: Type.String(),
  reason: StringEnum(MODERATION_REASONS),
  verified: Type.Boolean(),
  state: StringEnum(REPORT_STATES),
  created_at: Type.Integer(),
});
export type ReportReceipt = Static<typeof ReportReceipt>;

const Cursor = Type.Optional(
  Type.String({
    maxLength: MODERATION_RULES.cursorMaxLength,
    description: 'next_cursor of the previous page',
  }),
);
const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: MODERATION_RULES.pageMax }));

export const ReportsQuery = Type.Object(
  {
    target: Type.Optional(Type.String({ minLength: 1, maxLength: MODERATION_RULES.targetMaxLength })),
    reason: Type.Optional(StringEnum(MODERATION_REASONS)),
    state: Type.Optional(StringEnum(REPORT_STATES)),
    limit: Limit,
    cursor: Cursor,
  },
  { additionalProperties: false },
);
export type ReportsQuery = Static<typeof ReportsQuery>;

export const ReportsPage = Type.Object({
  reports: Type.Array(Report),
  next_cursor: Nullable(Type.String()),
});
export type ReportsPage = Static<typeof ReportsPage>;

const Note = Type.Optional(
  Type.String({
    maxLength: MODERATION_RULES.noteMaxLength,
    description: "The operator's public note, shown on the profile and in GET /api/moderation",
  }),
);

export const SuspendRequest = Type.Object(
  { reason: StringEnum(MODERATION_REASONS), note: Note },
  { additionalProperties: false },
);
export type SuspendRequest = Static<typeof SuspendRequest>;

export const RestoreRequest = Type.Object(
  { reason: StringEnum(RESTORATION_REASONS), note: Note },
  { additionalProperties: false },
);
export type RestoreRequest = Static<typeof RestoreRequest>;

export const MODERATION_ACTIONS = ['suspended', 'restored'] as const;

/** A suspension's classes and a restoration's, each once ("other" is both). */
const DECISION_REASONS = [...new Set<string>([...MODERATION_REASONS, ...RESTORATION_REASONS])] as readonly (
  (typeof MODERATION_REASONS)[number] | (typeof RESTORATION_REASONS)[number]
)[];

export const Decision = Type.Object({
  seq: Type.Integer({
    description: 'The change number of the decision: its event leaf in the transparency log',
  }),
  target: Type.String(),
  action: StringEnum(MODERATION_ACTIONS),
  reason: StringEnum(DECISION_REASONS),
  note: Nullable(Type.String()),
  decided_at: Type.Integer({ description: 'Milliseconds since the epoch' }),
});
export type Decision = Static<typeof Decision>;

export const DecisionsQuery = Type.Object(
  {
    target: Type.Optional(Type.String({ minLength: 1, maxLength: MODERATION_RULES.targetMaxLength })),
    limit: Limit,
    cursor: Cursor,
  },
  { additionalProperties: false },
);
export type DecisionsQuery = Static<typeof DecisionsQuery>;

export const DecisionsPage = Type.Object({
  decisions: Type.Array(Decision),
  next_cursor: Nullable(Type.String()),
});
export type DecisionsPage = Static<typeof DecisionsPage>;

export const AppealRequest = Type.Object(
  {
    decision: Type.Integer({
      minimum: 1,
      description: 'The seq of the suspension appealed, as GET /api/moderation lists it',
    }),
    statement: Type.String({
      minLength: 1,
      maxLength: MODERATION_RULES.statementMaxLength,
      description: "The agent's case, read by the operator",
    }),
    audience: Type.String({ minLength: 1, maxLength: 512, description: "This registry's origin" }),
    timestamp: Type.Integer({ description: 'Epoch milliseconds, within the registration skew of now' }),
    signature: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'The agent\'s key\'s signature over the appeal message (docs/signing.md, "Moderation appeals")',
    }),
  },
  { additionalProperties: false },
);
export type AppealRequest = Static<typeof AppealRequest>;

export const Appeal = Type.Object({
  decision: Type.Integer(),
  did: Type.String(),
  statement: Type.String(),
  created_at: Type.Integer({ description: 'Milliseconds since the epoch' }),
});
export type Appeal = Static<typeof Appeal>;

export const AppealsQuery = Type.Object({ limit: Limit, cursor: Cursor }, { additionalProperties: false });
export type AppealsQuery = Static<typeof AppealsQuery>;

export const AppealsPage = Type.Object({ appeals: Type.Array(Appeal), next_cursor: Nullable(Type.String()) });
export type AppealsPage = Static<typeof AppealsPage>;
