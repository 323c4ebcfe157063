import http from 'node:http';
import type { AddressInfo } from 'node:net';
import canonicalizeModule from 'canonicalize';
import { FlattenedSign, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import type { Provenance } from '../../src/modules/agents/provenance-schemas.js';

// canonicalize is CommonJS; its default export is the function under either module loader.
export const canonicalize = canonicalizeModule as unknown as (value: unknown) => string;

export interface Served {
  status?: number;
  body: string;
  etag?: string;
  location?: string;
  cacheControl?: string;
}

/** A web host for cards and its did.json, answering what the test puts in `files`. */
export class CardHost {
  readonly files = new Map<string, Served>();
  readonly requests: { path: string; ifNoneMatch?: string }[] = [];
  private server = http.createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const ifNoneMatch = request.headers['if-none-match'];
    this.requests.push({ path, ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }) });
    const file = this.files.get(path);
    if (file === undefined) {
      response.writeHead(404).end();
      return;
    }
    if (file.etag !== undefined && ifNoneMatch === file.etag) {
      response.writeHead(304, { etag: file.etag }).end();
      return;
    }
    response
      .writeHead(file.status ?? 200, {
        'content-type': 'application/json',
        ...(file.etag === undefined ? {} : { etag: file.etag }),
        ...(file.location === undefined ? {} : { location: file.location }),
        ...(file.cacheControl === undefined ? {} : { 'cache-control': file.cacheControl }),
      })
      .end(file.body);
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }
  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  get did(): string {
    return `did:web:127.0.0.1%3A${(this.server.address() as AddressInfo).port}`;
  }
  url(path: string): string {
    return `${this.origin}${path}`;
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export interface KeyPair {
  privateKey: CryptoKey;
  jwk: JWK;
}
export async function keyPair(): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, jwk: await exportJWK(publicKey) };
}

export function card(name: string, description: string): Record<string, unknown> {
  return {
    name,
    description,
    version: '1.0.0',
    supportedInterfaces: [
      { url: `https://agents.example/${name}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ],
    capabilities: { streaming: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      { id: 'route_planning', name: 'Route planning', description: 'Plans routes', tags: ['maps', 'Travel'] },
    ],
  };
}

/** A2A 8.4.2: a flattened JWS over the RFC 8785 canonical card without signatures. */
export async function sign(
  body: Record<string, unknown>,
  key: KeyPair,
  header: Record<string, string>,
): Promise<{ protected: string; signature: string }> {
  const { signatures: _ignored, ...unsigned } = body;
  const jws = await new FlattenedSign(new TextEncoder().encode(canonicalize(unsigned)))
    .setProtectedHeader({ alg: 'ES256', typ: 'JOSE', ...header })
    .sign(key.privateKey);
  return { protected: jws.protected as string, signature: jws.signature };
}

export interface Entry {
  id: string;
  did: string | null;
  name: string;
  capabilities: { type: string; tags?: string[] }[];
  tags: string[];
  endpoints: { type: string; url: string }[];
  provenance: Provenance;
}
