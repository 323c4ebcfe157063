/**
 * The one door to the server's internals for code outside the server package (the bench): what
 * seeds a database through the server's own store functions, builds a registry in process, and builds
 * a profile as the registry does (the bench's reference servers answer with it). Tests
 * of the server import its sources directly; nothing else reaches into packages/server/src.
 */
export { buildApp } from '@agent-registry/server/src/app.js';
export { createContext } from '@agent-registry/server/src/context.js';
export { openDatabase, openPostgresForMigrations, type Db } from '@agent-registry/server/src/db/connect.js';
export { transactionRunner } from '@agent-registry/server/src/db/group-commit.js';
export { MIGRATIONS, migrateToLatest } from '@agent-registry/server/src/db/migrations/index.js';
export { loadConfig, type Config } from '@agent-registry/server/src/kernel/config.js';
export { insertAgentIn } from '@agent-registry/server/src/modules/agents/agent-writes-store.js';
export {
  PROFILE_COLUMNS,
  insertAgent,
  type AgentProfileRow,
  type NewAgentRow,
  type RegisteredAgentRow,
} from '@agent-registry/server/src/modules/agents/agents-store.js';
export { toAgentProfile } from '@agent-registry/server/src/modules/agents/agent-view.js';
export type { AgentProfile } from '@agent-registry/server/src/modules/agents/schemas.js';
export {
  deriveAvailability,
  type ObservedAgent,
} from '@agent-registry/server/src/modules/availability/availability-model.js';
export { stampAgentChange } from '@agent-registry/server/src/modules/agents/change-feed-store.js';
export { aggregateReviews } from '@agent-registry/server/src/modules/reviews/reputation-model.js';
export {
  evidencedRatingsOf,
  insertReview,
  writeReputation,
  type NewReviewRow,
} from '@agent-registry/server/src/modules/reviews/reviews-store.js';
export { ServiceRecordService } from '@agent-registry/server/src/modules/service-record/service-record.js';
export { insertTask } from '@agent-registry/server/src/modules/tasks/tasks-store.js';
export { leafData } from '@agent-registry/server/src/modules/transparency-log/leaf.js';
export { MerkleTree, leafHash } from '@agent-registry/server/src/modules/transparency-log/merkle.js';
