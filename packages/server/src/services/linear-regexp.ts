// One engine for the registry, the SDK and the CLI: defined in the protocol package.
export { linearRegExp } from '@agent-registry/protocol';
