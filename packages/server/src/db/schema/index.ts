import type { AgentsPartial } from './agents.js';
import type { RegistrySettingsPartial } from './registry-settings.js';
import type { TasksPartial } from './tasks.js';
import type { RegistryCountersPartial } from './registry-counters.js';
import type { ReviewsPartial } from './reviews.js';
import type { UsedSignaturesPartial } from './used-signatures.js';
import type { ServiceRecordPartial } from './service-record.js';
import type { InvocationIdempotencyPartial } from './invocation-idempotency.js';
import type { ChangeFeedPartial } from './change-feed.js';
import type { RegistrationCountsPartial } from './registration-counts.js';
import type { InvocationQuotaPartial } from './invocation-quota.js';
import type { AgentPresencePartial } from './agent-presence.js';
import type { TransparencyLogPartial } from './transparency-log.js';
import type { FederationPartial } from './federation.js';
import type { EntryProbesPartial } from './entry-probes.js';
import type { WatchesPartial } from './watches.js';
import type { KeyRotationPartial } from './key-rotation.js';
import type { DomainsPartial } from './domains.js';
import type { ModerationPartial } from './moderation.js';

type DiscoveryPartial = ReviewsPartial & RegistryCountersPartial;
type TrustPartial = ServiceRecordPartial;

export type DatabaseSchema = AgentsPartial &
  RegistrySettingsPartial &
  TasksPartial &
  DiscoveryPartial &
  UsedSignaturesPartial &
  InvocationIdempotencyPartial &
  TrustPartial &
  ChangeFeedPartial &
  RegistrationCountsPartial &
  InvocationQuotaPartial &
  AgentPresencePartial &
  TransparencyLogPartial &
  FederationPartial &
  EntryProbesPartial &
  WatchesPartial &
  KeyRotationPartial &
  DomainsPartial &
  ModerationPartial;

export type { AgentsTable, AgentStatus } from './agents.js';
export type { RegistrySettingsTable } from './registry-settings.js';
export type { TaskDelivery, TaskErrorCode, TaskStatus, TasksTable } from './tasks.js';
export type { RegistryCountersTable } from './registry-counters.js';
export type { ReviewsTable } from './reviews.js';
export type { UsedSignaturesTable } from './used-signatures.js';
export type {
  CallPartnersTable,
  IdentityEvidenceTable,
  ServiceCallersTable,
  ServiceDailyTable,
  ServiceTotalsTable,
} from './service-record.js';
export type { InvocationIdempotencyTable } from './invocation-idempotency.js';
export type { ChangeFeedHeadTable } from './change-feed.js';
export type { RegistrationCountsTable } from './registration-counts.js';
export type { InvocationClientQuotaTable, InvocationQuotaTable } from './invocation-quota.js';
export type { AgentPresenceSlotsTable, AgentPresenceTable, WebhookProbesTable } from './agent-presence.js';
export type { LogRecordsTable, LogStartTable } from './transparency-log.js';
export type { RemoteEntriesTable, RemoteSourcesTable } from './federation.js';
export type { EntryObservationsTable, EntryProbesTable } from './entry-probes.js';
export type {
  WatchAvailabilityTable,
  WatchCursorTable,
  WatchDeliveriesTable,
  WatchesTable,
} from './watches.js';
export type { KeyRecoveryTable, RetiredKeysTable } from './key-rotation.js';
export type { AgentDomainsTable, AgentHandlesTable, DomainProofMethod } from './domains.js';
