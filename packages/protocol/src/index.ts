export { canonicalJson } from './canonical-json.js';
export { registryAudience } from './audience.js';
export {
  AUTHENTICATION_PURPOSE,
  REGISTRATION_PURPOSE,
  authenticationMessage,
  registrationMessage,
  registrationMessages,
  registrationMessageCandidates,
  type AuthenticationMessageInput,
  type RegistrationMessageInput,
} from './messages.js';
export {
  eip191Digest,
  ed25519PublicKey,
  recoverEip191Signer,
  secp256k1PublicKey,
  signEd25519,
  signEip191,
  verifyEd25519,
} from './signatures.js';
export {
  InvalidPublicKeyError,
  ethereumAddress,
  parsePublicKey,
  toChecksumAddress,
  type ParsedPublicKey,
} from './keys.js';
export { DidFormatError, isAgentId, parseDid, pkhDid, webDid, type ParsedDid } from './did.js';
export { CHAIN_ID_PATTERN, SUPPORTED_CHAINS, findChain, type ChainInfo } from './chains.js';
export {
  DELIVERY_MODES,
  KEY_TYPES,
  type Capability,
  type DeliveryMode,
  type JsonObject,
  type KeyType,
  type ProfileInput,
} from './types.js';
export {
  AUTHENTICATION_MAX_AGE_MS,
  AUTHENTICATION_MAX_FUTURE_MS,
  REGISTRATION_TIMESTAMP_SKEW_MS,
} from './timing.js';
export {
  PROFILE_LIMITS,
  checkProfile,
  type ProfileCheck,
  type ProfileCheckMode,
  type ProfileProblem,
  type ProfileProblemCode,
} from './profile-rules.js';
export {
  INVOCATION_LIMITS,
  REVIEW_LIMITS,
  SEARCH_LIMITS,
  SEARCH_ORDERS,
  SEARCH_SORTS,
  type SearchOrder,
  type SearchSort,
} from './limits.js';
export { linearRegExp } from './linear-regexp.js';
export { LOG_EVENT_KINDS, isKnownEvent, type LogEventCheck } from './log-events.js';
export {
  EMPTY_TREE_ROOT,
  LOG_OPERATIONS,
  LogVerificationError,
  TILE_WIDTH,
  checkProfileAgainstLeaf,
  decodeLeaf,
  isProfileLeaf,
  entryBundlePath,
  fromBase64,
  hashChildren,
  hashLeaf,
  hashTilePath,
  loggedProfile,
  merkleRoot,
  parseVerifierKey,
  profileSha256,
  sameBytes,
  splitEntryBundle,
  toBase64,
  verifyCheckpoint,
  verifyConsistency,
  verifyInclusion,
  verifyLogProof,
  type AnyLogLeaf,
  type Checkpoint,
  type LogEventLeaf,
  type LogLeaf,
  type LogOperation,
  type LogProof,
} from './transparency-log.js';
export {
  EMPTY_FOLLOW_STATE,
  appendToRange,
  checkFollowState,
  compactRange,
  extendLog,
  followStateFromStored,
  followStateOf,
  rangeRoot,
  storedFollowState,
  type LogExtension,
  type LogFollowState,
  type LogSource,
  type StoredFollowState,
} from './log-follower.js';
export {
  extendLogInSteps,
  type CatchUpBounds,
  type CatchUpResult,
  type LogStep,
  type TiledLogSource,
} from './log-catch-up.js';
export { capabilitiesDigest, namedListDigest, toolsDigest } from './observed-digest.js';
export { OBSERVED_STATUSES, type ObservedStatus } from './log-event-kinds-observed.js';
export {
  KEY_RECOVERY_CANCEL_PURPOSE,
  KEY_RECOVERY_SET_PURPOSE,
  KEY_RECOVERY_START_PURPOSE,
  KEY_ROTATION_PURPOSE,
  keyRotationMessage,
  recoveryCancelMessage,
  recoverySetMessage,
  recoveryStartMessage,
  signKeyMessage,
  type KeyRotationInput,
  type RecoverySetInput,
} from './key-messages.js';
export { IDENTITY_EVENT_KINDS, rotatedKey } from './log-event-kinds-identity.js';
export {
  MODERATION_EVENT_KINDS,
  MODERATION_REASONS,
  RESTORATION_REASONS,
  moderationEffect,
  appealMessage,
  MODERATION_APPEAL_PURPOSE,
  type AppealInput,
  type ModerationReason,
  type RestorationReason,
} from './log-event-kinds-moderation.js';
