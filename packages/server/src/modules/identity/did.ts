export {
  DidFormatError,
  isAgentId,
  parseDid,
  pkhDid,
  webDid,
  type ParsedDid,
} from '@agent-registry/protocol';
