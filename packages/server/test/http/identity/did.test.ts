import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { base58 } from '@scure/base';
import { EdDSASigner, ES256KSigner, createJWT, verifyJWT, type Signer } from 'did-jwt';
import { Resolver, type DIDResolutionResult, type DIDResolver } from 'did-resolver';
import { Wallet, getBytes } from 'ethers';
import { agentPath, bearer, ed25519Agent, secp256k1Agent, type TestAgent } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';

// ---------------------------------------------------------------------------------------------
// Local helpers
// ---------------------------------------------------------------------------------------------

interface VerificationMethod {
  id: string;
  type: string;
  controller: string;
  publicKeyMultibase?: string;
  blockchainAccountId?: string;
}

interface DidDocument {
  '@context': unknown[];
  id: string;
  verificationMethod: VerificationMethod[];
  authentication: string[];
  assertionMethod: string[];
}

interface ChainInfo {
  chain_id: string;
  name: string;
  native_currency: { name: string; symbol: string; decimals: number };
  explorer_url: string;
}

const randomAgentId = (): string => crypto.randomBytes(16).toString('hex');
const agentIdOf = (did: string): string => {
  const match = /:agent:([0-9a-f]{32})$/.exec(did);
  assert.ok(match, `not a registry did:web: ${did}`);
  return match[1] as string;
};

function assertErrorBody(
  response: { statusCode: number; body: string; headers: Record<string, unknown> },
  status: number,
  code: string,
): void {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['code', 'details', 'error'], response.body);
  assert.equal(body.code, code, response.body);
  assert.equal(typeof body.error, 'string');
  assert.ok((body.error as string).length > 0);
  assert.equal(typeof body.details, 'string');
  assert.ok((body.details as string).length > 0);
}

/** W3C DID Core shape of a did:web document for an Ed25519 key registered as `publicKeyHex`. */
function assertWebDocument(doc: DidDocument, did: string, publicKeyHex: string): void {
  assert.ok(Array.isArray(doc['@context']));
  assert.equal(doc['@context'][0], 'https://www.w3.org/ns/did/v1');
  assert.equal(doc.id, did);
  assert.equal(doc.verificationMethod.length, 1);
  const method = doc.verificationMethod[0]!;
  assert.ok(method.id.startsWith(`${did}#`), method.id);
  assert.equal(method.type, 'Multikey');
  assert.equal(method.controller, did);
  assert.equal(method.blockchainAccountId, undefined);
  const multibase = method.publicKeyMultibase;
  assert.equal(typeof multibase, 'string');
  assert.ok(multibase!.startsWith('z6Mk'), multibase);
  const decoded = base58.decode(multibase!.slice(1));
  assert.deepEqual(
    Buffer.from(decoded).toString('hex'),
    `ed01${publicKeyHex}`,
    'multicodec ed25519-pub prefix followed by the registered key',
  );
  assert.equal(decoded.length, 34);
  assert.deepEqual(doc.authentication, [method.id]);
  assert.deepEqual(doc.assertionMethod, [method.id]);
}

/** W3C DID Core shape of a did:pkh document (EcdsaSecp256k1RecoveryMethod2020, CAIP-10 account). */
function assertPkhDocument(doc: DidDocument, did: string, chainId: string, address: string): void {
  assert.ok(Array.isArray(doc['@context']));
  assert.equal(doc['@context'][0], 'https://www.w3.org/ns/did/v1');
  assert.equal(doc.id, did);
  assert.equal(doc.verificationMethod.length, 1);
  const method = doc.verificationMethod[0]!;
  assert.ok(method.id.startsWith(`${did}#`), method.id);
  assert.equal(method.type, 'EcdsaSecp256k1RecoveryMethod2020');
  assert.equal(method.controller, did);
  assert.equal(method.blockchainAccountId, `${chainId}:${address}`);
  assert.equal(method.publicKeyMultibase, undefined);
  assert.deepEqual(doc.authentication, [method.id]);
  assert.deepEqual(doc.assertionMethod, [method.id]);
}

// ---------------------------------------------------------------------------------------------

describe('DID documents, chains and payment addresses', () => {
  let registry: TestRegistry;
  let web: Registered & { agent: TestAgent & { seed: Uint8Array } };
  let pkh: Registered & { wallet: Wallet };

  before(async () => {
    registry = await startRegistry();
    const webAgent = ed25519Agent();
    web = { ...(await register(registry, webAgent)), agent: webAgent };
    const secp = secp256k1Agent({ chainId: 'eip155:8453' });
    pkh = { ...(await register(registry, secp)), wallet: secp.wallet };
  });
  after(() => registry.close());

  const get = (url: string) => registry.app.inject({ method: 'GET', url });
  const getJson = async <T>(url: string): Promise<T> => {
    const response = await get(url);
    assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    return response.json<T>();
  };

  describe('did:web documents', () => {
    test('the registered DIDs have the forms of section 2.1', () => {
      assert.match(web.did, /^did:web:localhost%3A8080:agent:[0-9a-f]{32}$/);
      assert.equal(pkh.did, `did:pkh:eip155:8453:${pkh.wallet.address}`);
    });

    test('GET /.well-known/did/web/agent/{id}/did.json is a DID Core document with the agent key', async () => {
      const id = agentIdOf(web.did);
      const doc = await getJson<DidDocument>(`/.well-known/did/web/agent/${id}/did.json`);
      assertWebDocument(doc, web.did, web.agent.publicKey);
    });

    test('GET /agent/{id}/did.json (did:web method path) gives the same document', async () => {
      const id = agentIdOf(web.did);
      const wellKnown = await getJson<DidDocument>(`/.well-known/did/web/agent/${id}/did.json`);
      const methodPath = await getJson<DidDocument>(`/agent/${id}/did.json`);
      assertWebDocument(methodPath, web.did, web.agent.publicKey);
      assert.deepEqual(methodPath, wellKnown);
    });

    test('an upper-case agent id in the path names the same (lower-case) DID', async () => {
      const id = agentIdOf(web.did);
      const doc = await getJson<DidDocument>(`/agent/${id.toUpperCase()}/did.json`);
      assertWebDocument(doc, web.did, web.agent.publicKey);
    });

    test('GET /api/did/{did}: URL-encoded and raw DID in the path resolve to the same document', async () => {
      const id = agentIdOf(web.did);
      const encoded = await getJson<DidDocument>(`/api/did/${encodeURIComponent(web.did)}`);
      assertWebDocument(encoded, web.did, web.agent.publicKey);
      // The raw DID (did:web:localhost%3A8080:...) in the path: the router decodes %3A to ':'.
      const raw = await getJson<DidDocument>(`/api/did/${web.did}`);
      assert.equal(web.did, `did:web:localhost%3A8080:agent:${id}`);
      assert.deepEqual(raw, encoded);
      // Fully decoded spelling with a literal port colon.
      const colon = await getJson<DidDocument>(`/api/did/did:web:localhost:8080:agent:${id}`);
      assert.deepEqual(colon, encoded);
      const wellKnown = await getJson<DidDocument>(`/.well-known/did/web/agent/${id}/did.json`);
      assert.deepEqual(encoded, wellKnown);
    });
  });

  describe('did:pkh documents', () => {
    test('GET /api/did/{did} gives EcdsaSecp256k1RecoveryMethod2020 with the CAIP-10 account', async () => {
      const doc = await getJson<DidDocument>(`/api/did/${encodeURIComponent(pkh.did)}`);
      assertPkhDocument(doc, pkh.did, 'eip155:8453', pkh.wallet.address);
      // The address is the EIP-55 checksummed wallet address (it has mixed case for a random key
      // with overwhelming probability, so this checks the checksum rather than the letters only).
      assert.equal(doc.verificationMethod[0]!.blockchainAccountId, `eip155:8453:${pkh.wallet.address}`);
    });

    test('the DID given with a lower-case address resolves to the canonical checksummed document', async () => {
      const canonical = await getJson<DidDocument>(`/api/did/${encodeURIComponent(pkh.did)}`);
      const lowerDid = `did:pkh:eip155:8453:${pkh.wallet.address.toLowerCase()}`;
      assert.notEqual(lowerDid, pkh.did);
      const lower = await getJson<DidDocument>(`/api/did/${encodeURIComponent(lowerDid)}`);
      assert.deepEqual(lower, canonical);
      assert.equal(lower.id, pkh.did);
      const rawLower = await getJson<DidDocument>(`/api/did/${lowerDid}`);
      assert.deepEqual(rawLower, canonical);
    });
  });

  describe('a JWT signed by the agent’s own key verifies against the served DID document', () => {
    let origin: string;
    const fetched: string[] = [];
    let resolver: Resolver;

    const notFound = (message: string): DIDResolutionResult => ({
      didDocument: null,
      didResolutionMetadata: { error: 'notFound', message },
      didDocumentMetadata: {},
    });

    async function fetchDocument(url: string): Promise<DIDResolutionResult> {
      fetched.push(url);
      const response = await fetch(url);
      if (!response.ok) return notFound(`HTTP ${response.status} from ${url}`);
      const didDocument = (await response.json()) as DIDResolutionResult['didDocument'];
      return {
        didDocument,
        didResolutionMetadata: { contentType: 'application/did+ld+json' },
        didDocumentMetadata: {},
      };
    }

    /** did:web method rule: did:web:<domain>:<path segments> -> https://<domain>/<segments>/did.json. */
    const webResolver: DIDResolver = async (_did, parsed) => {
      const [domainPart, ...segments] = parsed.id.split(':');
      const domain = decodeURIComponent(domainPart ?? '');
      // The registry's domain is localhost:8080; the test server listens elsewhere.
      if (domain !== 'localhost:8080') return notFound(`unknown domain ${domain}`);
      const path = segments.length === 0 ? '/.well-known/did.json' : `/${segments.join('/')}/did.json`;
      return fetchDocument(`${origin}${path}`);
    };

    const pkhResolver: DIDResolver = async (did) =>
      fetchDocument(`${origin}/api/did/${encodeURIComponent(did)}`);

    before(async () => {
      await registry.app.listen({ port: 0, host: '127.0.0.1' });
      const address = registry.app.server.address() as AddressInfo;
      origin = `http://127.0.0.1:${address.port}`;
      resolver = new Resolver({ web: webResolver, pkh: pkhResolver });
    });

    const sign = (issuer: string, signer: Signer, alg: string) =>
      createJWT(
        { sub: issuer, purpose: 'did-proof', nonce: crypto.randomUUID() },
        { issuer, signer, alg, expiresIn: 300 },
      );

    test('did:web (EdDSA): verifyJWT resolves over HTTP at /agent/{id}/did.json and succeeds', async () => {
      fetched.length = 0;
      const jwt = await sign(web.did, EdDSASigner(web.agent.seed), 'EdDSA');
      const result = await verifyJWT(jwt, { resolver });
      assert.equal(result.verified, true);
      assert.equal(result.issuer, web.did);
      assert.equal(result.payload.iss, web.did);
      assert.equal(result.payload.purpose, 'did-proof');
      assert.equal(result.signer.id, result.didResolutionResult.didDocument!.verificationMethod![0]!.id);
      assert.equal(result.signer.type, 'Multikey');
      assert.deepEqual(fetched, [`${origin}/agent/${agentIdOf(web.did)}/did.json`]);
    });

    test('did:web: a JWT for the same DID signed by a different Ed25519 key fails', async () => {
      const other = crypto.generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
      const otherSeed = new Uint8Array(Buffer.from(other.d as string, 'base64url'));
      const jwt = await sign(web.did, EdDSASigner(otherSeed), 'EdDSA');
      await assert.rejects(verifyJWT(jwt, { resolver }), /^Error: invalid_signature: /);
    });

    test('did:pkh (ES256K-R): verifyJWT resolves over HTTP at /api/did/{did} and succeeds', async () => {
      fetched.length = 0;
      const jwt = await sign(pkh.did, ES256KSigner(getBytes(pkh.wallet.privateKey), true), 'ES256K-R');
      const result = await verifyJWT(jwt, { resolver });
      assert.equal(result.verified, true);
      assert.equal(result.issuer, pkh.did);
      assert.equal(result.payload.iss, pkh.did);
      assert.equal(result.signer.type, 'EcdsaSecp256k1RecoveryMethod2020');
      assert.equal(result.signer.blockchainAccountId, `eip155:8453:${pkh.wallet.address}`);
      assert.deepEqual(fetched, [`${origin}/api/did/${encodeURIComponent(pkh.did)}`]);
    });

    test('did:pkh: a JWT for the same DID signed by a different secp256k1 key fails', async () => {
      const other = Wallet.createRandom();
      const jwt = await sign(pkh.did, ES256KSigner(getBytes(other.privateKey), true), 'ES256K-R');
      await assert.rejects(verifyJWT(jwt, { resolver }), /^Error: invalid_signature: /);
    });

    test('a did:web issuer unknown to the registry does not resolve (the server answers 404)', async () => {
      const id = randomAgentId();
      const unknown = `did:web:localhost%3A8080:agent:${id}`;
      const jwt = await sign(unknown, EdDSASigner(web.agent.seed), 'EdDSA');
      await assert.rejects(verifyJWT(jwt, { resolver }), (error: Error) => {
        assert.match(error.message, /^resolver_error: Unable to resolve DID document for did:web:/);
        assert.ok(
          error.message.includes(`notFound, HTTP 404 from ${origin}/agent/${id}/did.json`),
          error.message,
        );
        return true;
      });
    });
  });

  describe('status codes of did.json and DID resolution', () => {
    test('did.json: 400 INVALID_AGENT_ID when the id is not 32 hex characters', async () => {
      for (const id of [
        'abc',
        'z'.repeat(32),
        'a'.repeat(31),
        'a'.repeat(33),
        `${randomAgentId().slice(0, 31)}g`,
      ]) {
        assertErrorBody(await get(`/.well-known/did/web/agent/${id}/did.json`), 400, 'INVALID_AGENT_ID');
        assertErrorBody(await get(`/agent/${id}/did.json`), 400, 'INVALID_AGENT_ID');
      }
    });

    test('did.json: 404 DID_NOT_FOUND for an unknown id', async () => {
      const id = randomAgentId();
      assertErrorBody(await get(`/.well-known/did/web/agent/${id}/did.json`), 404, 'DID_NOT_FOUND');
      assertErrorBody(await get(`/agent/${id}/did.json`), 404, 'DID_NOT_FOUND');
    });

    test('resolve: 400 INVALID_DID for malformed or unsupported DIDs', async () => {
      const address = pkh.wallet.address;
      const bad = [
        'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK',
        'notadid',
        'did:example:123',
        'did:pkh:eip155:8453:0x1234',
        `did:pkh:eip155:8453:${address.slice(0, -1)}Z`,
        `did:pkh:eip155:8453:${address.slice(2)}`,
        `did:pkh:eip155:abc:${address}`,
        `did:web:localhost%3A8080:agent:${'g'.repeat(32)}`,
        'did:web:localhost%3A8080:agent:abc',
      ];
      for (const did of bad) {
        const response = await get(`/api/did/${encodeURIComponent(did)}`);
        assertErrorBody(response, 400, 'INVALID_DID');
      }
    });

    test('resolve: 404 DID_NOT_FOUND for unknown well-formed DIDs and for did:web of another domain', async () => {
      const unknown = [
        `did:web:localhost%3A8080:agent:${randomAgentId()}`,
        `did:pkh:eip155:8453:${Wallet.createRandom().address}`,
        // The registered wallet, but on another chain than it registered: a different DID.
        `did:pkh:eip155:1:${pkh.wallet.address}`,
        // An existing agent id under another domain is not this registry's DID.
        `did:web:example.com:agent:${agentIdOf(web.did)}`,
        `did:web:localhost%3A9090:agent:${agentIdOf(web.did)}`,
      ];
      for (const did of unknown) {
        assertErrorBody(await get(`/api/did/${encodeURIComponent(did)}`), 404, 'DID_NOT_FOUND');
      }
    });

    test('a deactivated agent’s DID documents answer 404 DID_NOT_FOUND', async () => {
      const edAgent = ed25519Agent();
      const ed = await register(registry, edAgent);
      const secp = await register(registry, secp256k1Agent({ chainId: 'eip155:137' }));
      const id = agentIdOf(ed.did);
      // Live before deactivation.
      await getJson<DidDocument>(`/agent/${id}/did.json`);
      await getJson<DidDocument>(`/api/did/${encodeURIComponent(secp.did)}`);

      for (const agent of [ed, secp]) {
        const response = await registry.app.inject({
          method: 'DELETE',
          url: agentPath(agent.did),
          headers: bearer(agent.token),
        });
        assert.equal(response.statusCode, 200, response.body);
      }

      assertErrorBody(await get(`/.well-known/did/web/agent/${id}/did.json`), 404, 'DID_NOT_FOUND');
      assertErrorBody(await get(`/agent/${id}/did.json`), 404, 'DID_NOT_FOUND');
      assertErrorBody(await get(`/api/did/${encodeURIComponent(ed.did)}`), 404, 'DID_NOT_FOUND');
      assertErrorBody(await get(`/api/did/${encodeURIComponent(secp.did)}`), 404, 'DID_NOT_FOUND');
      // Payment address of a deactivated did:pkh agent: agent not found.
      assertErrorBody(await get(agentPath(secp.did, '/payment-address')), 404, 'AGENT_NOT_FOUND');
    });
  });

  describe('chains', () => {
    const expectedIds = ['eip155:1', 'eip155:137', 'eip155:42161', 'eip155:8453'];

    test('GET /api/chains lists exactly the four supported chains with their details', async () => {
      const { chains } = await getJson<{ chains: ChainInfo[] }>('/api/chains');
      assert.ok(Array.isArray(chains));
      assert.deepEqual(chains.map((chain) => chain.chain_id).sort(), [...expectedIds].sort());
      for (const chain of chains) {
        assert.equal(typeof chain.name, 'string');
        assert.ok(chain.name.length > 0, chain.chain_id);
        assert.equal(typeof chain.native_currency.name, 'string');
        assert.ok(chain.native_currency.name.length > 0);
        assert.equal(chain.native_currency.decimals, 18, chain.chain_id);
        const explorer = new URL(chain.explorer_url);
        assert.equal(explorer.protocol, 'https:', chain.explorer_url);
      }
      const byId = new Map(chains.map((chain) => [chain.chain_id, chain]));
      for (const id of ['eip155:1', 'eip155:42161', 'eip155:8453']) {
        assert.equal(byId.get(id)!.native_currency.symbol, 'ETH', id);
      }
      assert.ok(['POL', 'MATIC'].includes(byId.get('eip155:137')!.native_currency.symbol));
    });

    test('GET /api/chains/{chain_id}, raw or URL-encoded, gives {chain}', async () => {
      const { chains } = await getJson<{ chains: ChainInfo[] }>('/api/chains');
      const base = chains.find((chain) => chain.chain_id === 'eip155:8453');
      assert.ok(base);
      const raw = await getJson<{ chain: ChainInfo }>('/api/chains/eip155:8453');
      assert.deepEqual(Object.keys(raw), ['chain']);
      assert.deepEqual(raw.chain, base);
      const encoded = await getJson<{ chain: ChainInfo }>('/api/chains/eip155%3A8453');
      assert.deepEqual(encoded, raw);
      for (const id of expectedIds) {
        const { chain } = await getJson<{ chain: ChainInfo }>(`/api/chains/${encodeURIComponent(id)}`);
        assert.equal(chain.chain_id, id);
      }
    });

    test('404 CHAIN_NOT_FOUND for an unsupported chain, 400 INVALID_CHAIN_ID for a malformed one', async () => {
      assertErrorBody(await get('/api/chains/eip155:5'), 404, 'CHAIN_NOT_FOUND');
      assertErrorBody(await get('/api/chains/foo'), 400, 'INVALID_CHAIN_ID');
      assertErrorBody(await get('/api/chains/eip155:abc'), 400, 'INVALID_CHAIN_ID');
    });
  });

  describe('payment address', () => {
    test('a did:pkh agent: {chain_id, address, source: "did"} derived from its DID', async () => {
      const body = await getJson<Record<string, unknown>>(agentPath(pkh.did, '/payment-address'));
      assert.deepEqual(body, { chain_id: 'eip155:8453', address: pkh.wallet.address, source: 'did' });
      assert.equal(`did:pkh:${body.chain_id}:${body.address}`, pkh.did);
      // The DID spelt with a lower-case address names the same agent.
      const lowerDid = `did:pkh:eip155:8453:${pkh.wallet.address.toLowerCase()}`;
      assert.deepEqual(await getJson(agentPath(lowerDid, '/payment-address')), body);
    });

    test('404 PAYMENT_ADDRESS_UNAVAILABLE for a did:web agent', async () => {
      assertErrorBody(await get(agentPath(web.did, '/payment-address')), 404, 'PAYMENT_ADDRESS_UNAVAILABLE');
    });

    test('404 AGENT_NOT_FOUND for an unknown agent', async () => {
      const unknownPkh = `did:pkh:eip155:8453:${Wallet.createRandom().address}`;
      assertErrorBody(await get(agentPath(unknownPkh, '/payment-address')), 404, 'AGENT_NOT_FOUND');
      const unknownWeb = `did:web:localhost%3A8080:agent:${randomAgentId()}`;
      assertErrorBody(await get(agentPath(unknownWeb, '/payment-address')), 404, 'AGENT_NOT_FOUND');
    });

    test('400 INVALID_DID for a malformed DID', async () => {
      for (const did of ['notadid', 'did:pkh:eip155:8453:0x1234', 'did:key:z6Mkabc']) {
        assertErrorBody(await get(agentPath(did, '/payment-address')), 400, 'INVALID_DID');
      }
    });
  });
});
