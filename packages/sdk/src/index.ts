export { AgentKey, type Eip191Signer } from './keys.js';
export {
  RegistryClient,
  type InvokeOptions,
  type Page,
  type RegistryClientOptions,
  type ReviewInput,
  type SearchOptions,
  type RetryPolicy,
} from './client.js';
export {
  ClientConfigError,
  InvocationError,
  InvocationFailedError,
  InvocationTimeoutError,
  NetworkError,
  LogVerificationError,
  RegistryError,
  WebhookFailedError,
  type RegistryErrorBody,
} from './errors.js';
export {
  serve,
  type CapabilityHandler,
  type ServeOptions,
  type TaskContext,
  type Worker,
  type WorkerEvents,
} from './worker.js';
export {
  WebhookVerificationError,
  verifyWebhook,
  webhookHandler,
  isRegistryPing,
  type RegistryPing,
  type WebhookAnswer,
  type WebhookDelivery,
  type WebhookHandler,
  type WebhookHandlerOptions,
} from './webhook.js';
export {
  verifyWatchDelivery,
  type CreatedWatch,
  type Watch,
  type WatchDelivery,
  type WatchEventType,
  type WatchList,
  type WatchRequest,
  type WatchesApi,
} from './client/watches.js';
export type {
  AppealList,
  ModerationApi,
  ModerationAppeal,
  ModerationDecision,
  ModerationDecisionList,
  ReportList,
  ReportReason,
  ReportReceipt,
  ReportRequest,
  RestoreRequest,
  SuspendRequest,
} from './client/moderation.js';
export { verifyStandardWebhook } from './webhook.js';
export type * from './types.js';
export { registryAudience } from '@agent-registry/protocol';
export { capabilitiesDigest, toolsDigest } from '@agent-registry/protocol';
export type {
  FollowedProfile,
  FollowLogOptions,
  LogCatchUp,
  LogFollowState,
  AnyLogLeaf,
  LogEventLeaf,
  LogLeaf,
  LogProof,
  VerifiedAgent,
} from './client/transparency.js';
