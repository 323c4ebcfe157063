export interface ChainInfo {
  chain_id: string;
  namespace: 'eip155';
  reference: string;
  name: string;
  native_currency: { name: string; symbol: string; decimals: number };
  explorer_url: string;
  testnet: boolean;
}

const eip155 = (
  reference: number,
  name: string,
  currency: ChainInfo['native_currency'],
  explorerUrl: string,
): ChainInfo => ({
  chain_id: `eip155:${reference}`,
  namespace: 'eip155',
  reference: String(reference),
  name,
  native_currency: currency,
  explorer_url: explorerUrl,
  testnet: false,
});

const ether = { name: 'Ether', symbol: 'ETH', decimals: 18 };

export const SUPPORTED_CHAINS: readonly ChainInfo[] = [
  eip155(1, 'Ethereum Mainnet', ether, 'https://etherscan.io'),
  eip155(137, 'Polygon', { name: 'POL', symbol: 'POL', decimals: 18 }, 'https://polygonscan.com'),
  eip155(42161, 'Arbitrum One', ether, 'https://arbiscan.io'),
  eip155(8453, 'Base', ether, 'https://basescan.org'),
];

const byId = new Map(SUPPORTED_CHAINS.map((chain) => [chain.chain_id, chain]));

/** CAIP-2 chain id in the eip155 namespace: `eip155:` followed by a decimal chain reference. */
export const CHAIN_ID_PATTERN = /^eip155:[1-9][0-9]{0,31}$/;

export const findChain = (chainId: string): ChainInfo | undefined => byId.get(chainId);
