export {
  DELIVERY_MODES,
  KEY_TYPES,
  type Capability,
  type DeliveryMode,
  type JsonObject,
  type KeyType,
  type ProfileInput,
} from '@agent-registry/protocol';
