export {
  InvalidPublicKeyError,
  ethereumAddress,
  parsePublicKey,
  toChecksumAddress,
  type ParsedPublicKey,
} from '@agent-registry/protocol';
