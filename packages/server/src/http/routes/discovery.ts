import type { AppContext } from '../../context.js';
import { listChains, requireChain } from '../../services/chains.js';
import { DidParams, errors } from '../schemas/common.js';
import { AgentIdParams, ChainParams, DidDocument } from '../schemas/discovery.js';
import type { App } from '../types.js';
import { Type } from '@sinclair/typebox';

export function discoveryRoutes(app: App, ctx: AppContext): void {
  const didJson = {
    tags: ['DID'],
    params: AgentIdParams,
    response: { 200: DidDocument, ...errors(400, 404) },
  };
  app.get(
    '/.well-known/did/web/agent/:id/did.json',
    { schema: { ...didJson, summary: 'DID document of a did:web agent' } },
    async (request) => ctx.didResolution.resolveWebAgent(request.params.id),
  );
  // Where did:web resolvers look for did:web:<domain>:agent:<id> (path segments, then /did.json).
  app.get(
    '/agent/:id/did.json',
    { schema: { ...didJson, summary: 'DID document at the did:web method path' } },
    async (request) => ctx.didResolution.resolveWebAgent(request.params.id),
  );
  app.get(
    '/api/did/:did',
    {
      schema: {
        tags: ['DID'],
        summary: 'Resolve a did:web or did:pkh DID of this registry',
        params: DidParams,
        response: { 200: DidDocument, ...errors(400, 404) },
      },
    },
    async (request) => ctx.didResolution.resolve(request.params.did),
  );

  app.get(
    '/api/chains',
    {
      schema: {
        tags: ['Chains'],
        summary: 'Supported chains',
        response: { 200: Type.Object({ chains: Type.Array(Type.Ref('Chain')) }) },
      },
    },
    async () => ({ chains: listChains() }),
  );
  app.get(
    '/api/chains/:chain_id',
    {
      schema: {
        tags: ['Chains'],
        summary: 'One supported chain',
        params: ChainParams,
        response: { 200: Type.Object({ chain: Type.Ref('Chain') }), ...errors(400, 404) },
      },
    },
    async (request) => ({ chain: requireChain(request.params.chain_id) }),
  );
}
