/**
 * The one door to the server's internals for code outside the server package (the bench): what
 * seeds a database through the server's own store functions and builds a registry in process. Tests
 * of the server import its sources directly; nothing else reaches into packages/server/src.
 */
export { buildApp } from '@agent-registry/server/src/app.js';
export { createContext } from '@agent-registry/server/src/context.js';
export { openDatabase, type Db } from '@agent-registry/server/src/db/connect.js';
export { transactionRunner } from '@agent-registry/server/src/db/group-commit.js';
export { migrateToLatest } from '@agent-registry/server/src/db/migrations/index.js';
export { loadConfig, type Config } from '@agent-registry/server/src/kernel/config.js';
export { insertAgentIn } from '@agent-registry/server/src/modules/agents/agent-writes-store.js';
export {
  insertAgent,
  type NewAgentRow,
  type RegisteredAgentRow,
} from '@agent-registry/server/src/modules/agents/agents-store.js';
export { stampAgentChange } from '@agent-registry/server/src/modules/agents/change-feed-store.js';
export { aggregateReviews } from '@agent-registry/server/src/modules/reviews/reputation-model.js';
export {
  evidencedRatingsOf,
  insertReview,
  writeReputation,
  type NewReviewRow,
} from '@agent-registry/server/src/modules/reviews/reviews-store.js';
export { insertTask } from '@agent-registry/server/src/modules/tasks/tasks-store.js';
export { leafData } from '@agent-registry/server/src/modules/transparency-log/leaf.js';
export { MerkleTree, leafHash } from '@agent-registry/server/src/modules/transparency-log/merkle.js';
