import { Type } from '@sinclair/typebox';
import { checkedByService } from '../../http/common-schemas.js';

export const Chain = Type.Object(
  {
    chain_id: Type.String({ examples: ['eip155:1'] }),
    namespace: Type.String(),
    reference: Type.String(),
    name: Type.String(),
    native_currency: Type.Object({ name: Type.String(), symbol: Type.String(), decimals: Type.Integer() }),
    explorer_url: Type.String({ format: 'uri' }),
    testnet: Type.Boolean(),
  },
  { $id: 'Chain' },
);

export const ChainParams = Type.Object({
  chain_id: Type.String({ description: 'CAIP-2 id, e.g. eip155:1' }),
});
export const AgentIdParams = Type.Object({
  id: checkedByService(
    Type.String({ description: '32 lowercase hexadecimal characters', pattern: '^[0-9a-f]{32}$' }),
    ['pattern'],
  ),
});
