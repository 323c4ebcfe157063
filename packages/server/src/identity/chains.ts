export { CHAIN_ID_PATTERN, SUPPORTED_CHAINS, findChain, type ChainInfo } from '@agent-registry/protocol';
