import type { DidResolutionService } from './did-resolution.js';
import { listChains, requireChain } from '../identity/chains.js';
import { DidParams, errors, ref } from '../../http/common-schemas.js';
import { AgentIdParams, ChainParams } from './did-schemas.js';
import { DidDocument } from '../identity/schemas.js';
import type { App } from '../../http/types.js';
import { Type } from '@sinclair/typebox';

/** What the DID routes use of the context. */
export interface DidRouteDeps {
  didResolution: DidResolutionService;
}

export function didRoutes(app: App, ctx: DidRouteDeps): void {
  const didJson = {
    tags: ['DID'],
    params: AgentIdParams,
    security: [],
    'x-status-reasons': {
      400: 'The id is not 32 hexadecimal characters (`INVALID_AGENT_ID`).',
      404: 'No agent has this id (`DID_NOT_FOUND`).',
    },
    response: { 200: ref(DidDocument), ...errors(400, 404) },
  };
  app.get(
    '/.well-known/did/web/agent/:id/did.json',
    {
      schema: {
        ...didJson,
        operationId: 'getWellKnownDidDocument',
        summary: 'DID document of a did:web agent',
        description: 'The did.json of did:web:<domain>:agent:<id> under /.well-known/did/web/.',
      },
    },
    async (request) => ctx.didResolution.resolveWebAgent(request.params.id),
  );
  // Where did:web resolvers look for did:web:<domain>:agent:<id> (path segments, then /did.json).
  app.get(
    '/agent/:id/did.json',
    {
      schema: {
        ...didJson,
        operationId: 'getDidDocument',
        summary: 'DID document at the did:web method path',
        description: 'Where did:web resolvers look for did:web:<domain>:agent:<id>.',
      },
    },
    async (request) => ctx.didResolution.resolveWebAgent(request.params.id),
  );
  app.get(
    '/api/did/:did',
    {
      schema: {
        tags: ['DID'],
        operationId: 'resolveDid',
        summary: 'Resolve a did:web or did:pkh DID of this registry',
        description: 'The DID document of any agent registered here, by its DID (URL-encoded).',
        security: [],
        params: DidParams,
        'x-status-reasons': {
          400: 'The DID is malformed or not of this registry (`INVALID_DID`).',
          404: 'No agent has this DID (`DID_NOT_FOUND`).',
        },
        response: { 200: ref(DidDocument), ...errors(400, 404) },
      },
    },
    async (request) => ctx.didResolution.resolve(request.params.did),
  );

  app.get(
    '/api/chains',
    {
      schema: {
        tags: ['Chains'],
        operationId: 'listChains',
        summary: 'Supported chains',
        description: 'The CAIP-2 chains a secp256k1 agent may register on.',
        security: [],
        'x-no-database': true,
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
        operationId: 'getChain',
        summary: 'One supported chain',
        description: 'One supported chain by its CAIP-2 id.',
        security: [],
        'x-no-database': true,
        'x-status-reasons': {
          400: 'The chain id is not CAIP-2 (`INVALID_CHAIN_ID`).',
          404: 'The chain is not supported (`CHAIN_NOT_FOUND`).',
        },
        params: ChainParams,
        response: { 200: Type.Object({ chain: Type.Ref('Chain') }), ...errors(400, 404) },
      },
    },
    async (request) => ({ chain: requireChain(request.params.chain_id) }),
  );
}
