import type { Db } from '../../db/connect.js';
import { findActiveAgent } from './agents-store.js';
import { BadRequestError, NotFoundError } from '../../kernel/errors.js';
import { isAgentId, webDid } from '@agent-registry/protocol';
import { buildDidDocument } from '../identity/did-document.js';
import type { DidDocument } from '../identity/schemas.js';
import { a2aAgentCardUrl } from './agent-view.js';
import { requireDid } from '../identity/did-param.js';

export interface DidResolutionDeps {
  db: Db;
  didWebDomain: string;
  publicUrl: string;
}

const didNotFound = (did: string): NotFoundError =>
  new NotFoundError(
    'DID_NOT_FOUND',
    `${did} is not a DID of an active agent of this registry`,
    'DID not found',
  );

export class DidResolutionService {
  constructor(private readonly deps: DidResolutionDeps) {}

  async resolve(rawDid: string | undefined): Promise<DidDocument> {
    const parsed = requireDid(rawDid, this.deps.didWebDomain);
    if (parsed.method === 'web' && !parsed.isLocal) throw didNotFound(parsed.did);
    return this.documentFor(parsed.did);
  }

  /** The did.json of `did:web:<registry domain>:agent:<id>`. */
  async resolveWebAgent(agentId: string | undefined): Promise<DidDocument> {
    if (agentId === undefined || !isAgentId(agentId)) {
      throw new BadRequestError(
        'INVALID_AGENT_ID',
        'The agent id in a did:web path is 32 hexadecimal characters',
      );
    }
    return this.documentFor(webDid(this.deps.didWebDomain, agentId.toLowerCase()));
  }

  private async documentFor(did: string): Promise<DidDocument> {
    const row = await findActiveAgent(this.deps.db, did);
    if (row === undefined) throw didNotFound(did);
    return buildDidDocument({
      did: row.did,
      keyType: row.key_type,
      // Multikey carries a secp256k1 key compressed, as its key id holds it.
      publicKeyHex: row.key_type === 'secp256k1' ? row.key_id.slice('secp256k1:'.length) : row.public_key,
      chainId: row.chain_id,
      // did:pkh:eip155:<chain>:<address>: the address is the DID's last segment.
      address: row.key_type === 'secp256k1' ? (row.did.split(':').at(-1) ?? null) : null,
      profileUrl: `${this.deps.publicUrl}/api/agents/${encodeURIComponent(row.did)}`,
      agentCardUrl: a2aAgentCardUrl(this.deps.publicUrl, row.did),
      keyGeneration: Number(row.key_generation),
    });
  }
}
