import { BadRequestError, NotFoundError } from '../../kernel/errors.js';
import { CHAIN_ID_PATTERN, SUPPORTED_CHAINS, findChain, type ChainInfo } from '@agent-registry/protocol';

export const listChains = (): ChainInfo[] => [...SUPPORTED_CHAINS];

/** A supported chain by CAIP-2 id: 400 when the id is malformed, 404 when it is not supported. */
export function requireChain(chainId: string): ChainInfo {
  if (!CHAIN_ID_PATTERN.test(chainId)) {
    throw new BadRequestError(
      'INVALID_CHAIN_ID',
      `"${chainId.slice(0, 80)}" is not a CAIP-2 chain id such as eip155:1`,
    );
  }
  const chain = findChain(chainId);
  if (chain === undefined) {
    throw new NotFoundError(
      'CHAIN_NOT_FOUND',
      `Chain ${chainId} is not supported; see GET /api/chains`,
      'Chain not found',
    );
  }
  return chain;
}
