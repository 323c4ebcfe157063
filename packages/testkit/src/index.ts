/**
 * What the tests of the server, SDK and CLI and the bench share, at the process level: nothing here
 * loads the server's code (registry processes run it through tsx). The in-process registry is
 * `@agent-registry/testkit/in-process`; the server's internals for seeding are
 * `@agent-registry/testkit/server-internals`.
 */
export {
  TEST_PUBLIC_URL,
  agentPath,
  bearer,
  defaultProfile,
  ed25519Agent,
  referenceCanonicalJson,
  registrationBody,
  secp256k1Agent,
  type Capability,
  type Profile,
  type TestAgent,
} from './agents.js';
export {
  serveAgentCard,
  startRegistryImportingCards,
  type AgentCardHost,
  type CardListing,
} from './agent-cards.js';
export { startTxtServer, startWellKnownServer } from './domain-proofs.js';
export { createTestDatabase, testDatabase, type DatabaseKind, type TestDatabase } from './databases.js';
export { eventually } from './eventually.js';
export { freePort } from './ports.js';
export {
  DEFAULT_TEST_POSTGRES_URL,
  WITH_POSTGRES,
  privateClusterUnavailable,
  startPrivateCluster,
  type PrivateCluster,
  type PrivateClusterOptions,
} from './postgres.js';
export {
  SERVER_DIR,
  UNLIMITED_REGISTRATIONS,
  startRegistryProcess,
  type RegistryProcess,
} from './registry-process.js';
