import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generatePrimeSync } from 'node:crypto';
import { FlattenedSign, importJWK, type CryptoKey, type JWK } from 'jose';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import type { Provenance } from '../../../src/modules/agents/provenance-schemas.js';
import { loadConfig } from '../../../src/kernel/config.js';
import { OPERATOR_TOKEN, type SourceStatus, federationSources } from '../../support/federation-status.js';
import {
  type KeyPair,
  type Entry,
  canonicalize,
  CardHost,
  keyPair,
  card,
  sign,
} from '../../support/card-host.js';

describe('importing A2A agent cards (A2A v1.0 section 8.4 against the did:web trust root)', () => {
  const host = new CardHost();
  let registry: TestRegistry;
  let trusted: KeyPair;
  let notAsserted: KeyPair;
  let attacker: KeyPair;
  const paths = [
    '/verified.json',
    '/unsigned.json',
    '/jku-attacker.json',
    '/jku-with-trusted-kid.json',
    '/tampered.json',
    '/not-asserted.json',
    '/garbage.json',
    '/gone.json',
    '/huge.json',
  ];

  const entry = async (path: string): Promise<Entry | undefined> => {
    const response = await registry.app.inject({
      method: 'GET',
      url: `/api/federation/entries/${encodeURIComponent(`a2a:${host.url(path)}`)}`,
    });
    return response.statusCode === 200 ? response.json<Entry>() : undefined;
  };
  const source = async (path: string): Promise<SourceStatus | undefined> => {
    const sources = await federationSources(registry);
    return sources.find((candidate) => candidate.id === `a2a:${host.url(path)}`);
  };

  before(async () => {
    await host.start();
    [trusted, notAsserted, attacker] = await Promise.all([keyPair(), keyPair(), keyPair()]);
    const did = host.did;
    host.files.set('/.well-known/did.json', {
      body: JSON.stringify({
        '@context': ['https://www.w3.org/ns/did/v1'],
        id: did,
        verificationMethod: [
          { id: `${did}#key-1`, type: 'JsonWebKey2020', controller: did, publicKeyJwk: trusted.jwk },
          { id: `${did}#key-2`, type: 'JsonWebKey2020', controller: did, publicKeyJwk: notAsserted.jwk },
        ],
        assertionMethod: [`${did}#key-1`],
      }),
    });
    host.files.set('/attacker-jwks.json', {
      body: JSON.stringify({ keys: [{ ...attacker.jwk, kid: 'evil' }] }),
    });

    const verified = card('Route Planner', 'Plans routes across cities');
    verified.signatures = [await sign(verified, trusted, { kid: `${did}#key-1` })];
    host.files.set('/verified.json', { body: JSON.stringify(verified), etag: '"v1"' });

    host.files.set('/unsigned.json', { body: JSON.stringify(card('Plain Planner', 'No signatures')) });

    const jku = card('Jku Planner', 'Names its own key source');
    jku.signatures = [await sign(jku, attacker, { kid: 'evil', jku: host.url('/attacker-jwks.json') })];
    host.files.set('/jku-attacker.json', { body: JSON.stringify(jku) });

    // The attacker's signature under the trusted key's name, with a jku to its own key: the key named
    // by the trust root does not verify it.
    const borrowed = card('Borrowed Planner', 'Claims the trusted key');
    borrowed.signatures = [
      await sign(borrowed, attacker, { kid: `${did}#key-1`, jku: host.url('/attacker-jwks.json') }),
    ];
    host.files.set('/jku-with-trusted-kid.json', { body: JSON.stringify(borrowed) });

    const tampered = card('Tampered Planner', 'Signed text');
    tampered.signatures = [await sign(tampered, trusted, { kid: `${did}#key-1` })];
    tampered.description = 'Changed after signing';
    host.files.set('/tampered.json', { body: JSON.stringify(tampered) });

    const second = card('Second Key Planner', 'Signed by a key that may not assert');
    second.signatures = [await sign(second, notAsserted, { kid: `${did}#key-2` })];
    host.files.set('/not-asserted.json', { body: JSON.stringify(second) });

    host.files.set('/garbage.json', { body: '<html>not a card' });
    host.files.set('/gone.json', { body: JSON.stringify(card('Soon Gone', 'Here for one fetch')) });
    host.files.set('/huge.json', {
      body: JSON.stringify({ ...card('Huge', 'x'), pad: 'x'.repeat(40 * 1024) }),
    });

    registry = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      // The host is plain http on loopback: its did.json may be the trust root only with this switch.
      FEDERATION_A2A_ALLOW_HTTP_TRUST_ROOTS: 'true',
      FEDERATION_A2A_CARDS: paths.map((path) => host.url(path)).join(','),
      FEDERATION_MAX_RESPONSE_KB: '32',
    });
    await registry.ctx.federation.refresh();
  });
  after(async () => {
    await registry.close();
    await host.close();
  });

  test('a card signed with a key of its domain did:web assertionMethod is verified, with DID and kid', async () => {
    const found = await entry('/verified.json');
    assert.ok(found, 'the verified card is listed');
    assert.equal(found.name, 'Route Planner');
    assert.equal(found.provenance.kind, 'imported');
    assert.equal(found.provenance.format, 'a2a-agent-card');
    assert.equal(found.provenance.verification, 'verified');
    assert.equal(found.provenance.did, host.did);
    assert.equal(found.provenance.kid, `${host.did}#key-1`);
    assert.equal(found.provenance.source_url, host.url('/verified.json'));
    assert.equal(found.did, host.did);
    assert.deepEqual(found.capabilities, [
      { type: 'route_planning', description: 'Plans routes', tags: ['maps', 'Travel'] },
    ]);
    assert.deepEqual(found.tags, ['maps', 'travel']);
    assert.deepEqual(found.endpoints, [{ type: 'a2a', url: 'https://agents.example/Route%20Planner' }]);
  });

  test('an unsigned card is listed as unsigned', async () => {
    assert.equal((await entry('/unsigned.json'))?.provenance.verification, 'unsigned');
  });

  test('a jku pointing at an attacker key never verifies', async () => {
    const own = await entry('/jku-attacker.json');
    assert.equal(own?.provenance.verification, 'signed-untrusted');
    assert.match(own?.provenance.reason ?? '', /jku .* is not a trust root/);
    const borrowed = await entry('/jku-with-trusted-kid.json');
    assert.equal(borrowed?.provenance.verification, 'invalid');
    assert.match(borrowed?.provenance.reason ?? '', /does not verify/);
    assert.ok(
      !host.requests.some((request) => request.path === '/attacker-jwks.json'),
      'the registry never fetched the jku',
    );
  });

  test('a signature over different bytes is invalid', async () => {
    const found = await entry('/tampered.json');
    assert.equal(found?.provenance.verification, 'invalid');
    assert.match(found?.provenance.reason ?? '', /does not verify over the card's RFC 8785 canonical JSON/);
  });

  test('a key in did.json but not in assertionMethod is refused, with the reason recorded', async () => {
    const found = await entry('/not-asserted.json');
    assert.equal(found?.provenance.verification, 'signed-untrusted');
    assert.match(found?.provenance.reason ?? '', /not in its assertionMethod/);
    assert.match((await source('/not-asserted.json'))?.last_error ?? '', /not in its assertionMethod/);
  });

  test('verification states are filterable and shown in federated search', async () => {
    const response = await registry.app.inject({
      method: 'GET',
      url: '/api/federation/entries?verification=verified',
    });
    assert.deepEqual(
      response.json<{ entries: Entry[] }>().entries.map((found) => found.name),
      ['Route Planner'],
    );
    const search = await registry.app.inject({
      method: 'GET',
      url: '/api/agents/search?scope=federated&q=planner',
    });
    const hits = search.json<{ agents: { name: string; provenance: Provenance; home_registry: string }[] }>()
      .agents;
    assert.equal(hits.length, 6);
    assert.ok(hits.every((hit) => hit.home_registry === host.origin && hit.provenance.kind === 'imported'));
  });

  test('garbage and oversized answers are refused with a reason on the status, and no entry', async () => {
    const garbage = await source('/garbage.json');
    assert.equal(garbage?.state, 'error');
    assert.match(garbage?.last_error ?? '', /did not answer JSON/);
    assert.equal(await entry('/garbage.json'), undefined);
    const huge = await source('/huge.json');
    assert.equal(huge?.state, 'error');
    assert.match(huge?.last_error ?? '', /more than 32 KB/);
  });

  test('a refresh asks with the ETag; a card that disappears has its entry removed', async () => {
    assert.ok(await entry('/gone.json'));
    host.files.delete('/gone.json');
    host.requests.length = 0;
    await registry.ctx.federation.refresh();
    assert.ok(
      host.requests.some((request) => request.path === '/verified.json' && request.ifNoneMatch === '"v1"'),
      'the card was asked for with If-None-Match',
    );
    assert.equal(
      (await entry('/verified.json'))?.provenance.verification,
      'verified',
      'a 304 keeps the entry',
    );
    assert.equal(await entry('/gone.json'), undefined);
    const gone = await source('/gone.json');
    assert.equal(gone?.entries, 0);
    assert.match(gone?.last_error ?? '', /answered 404: its entry was removed/);
  });
});

describe('the did:web trust root is read as did:web defines it', () => {
  test('over https only: a card served over http is at most signed-untrusted unless the operator allows it', async () => {
    const host = new CardHost();
    await host.start();
    const key = await keyPair();
    const did = host.did;
    const didDocument = {
      '@context': ['https://www.w3.org/ns/did/v1'],
      id: did,
      verificationMethod: [
        { id: `${did}#key-1`, type: 'JsonWebKey2020', controller: did, publicKeyJwk: key.jwk },
      ],
      assertionMethod: [`${did}#key-1`],
    };
    host.files.set('/.well-known/did.json', { body: JSON.stringify(didDocument) });
    const signed = card('Plain Http Planner', 'Signed, served over http');
    signed.signatures = [await sign(signed, key, { kid: `${did}#key-1` })];
    host.files.set('/card.json', { body: JSON.stringify(signed) });
    const provenanceOf = async (registry: TestRegistry): Promise<Provenance | undefined> => {
      const response = await registry.app.inject({
        method: 'GET',
        url: `/api/federation/entries/${encodeURIComponent(`a2a:${host.url('/card.json')}`)}`,
      });
      return response.statusCode === 200 ? response.json<Entry>().provenance : undefined;
    };
    const strict = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_A2A_CARDS: host.url('/card.json'),
    });
    try {
      await strict.ctx.federation.refresh();
      const provenance = await provenanceOf(strict);
      assert.equal(provenance?.verification, 'signed-untrusted');
      assert.match(
        provenance?.reason ?? '',
        /serves its card over http, and did:web resolves over https only.*FEDERATION_A2A_ALLOW_HTTP_TRUST_ROOTS=true/,
      );
      assert.ok(
        !host.requests.some((request) => request.path === '/.well-known/did.json'),
        'no did.json was read over http',
      );
    } finally {
      await strict.close();
    }

    // A did.json that redirects elsewhere (here a copy on the same host) is not followed.
    host.files.set('/moved-did.json', { body: JSON.stringify(didDocument) });
    host.files.set('/.well-known/did.json', { status: 302, body: '', location: host.url('/moved-did.json') });
    const development = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_A2A_ALLOW_HTTP_TRUST_ROOTS: 'true',
      FEDERATION_A2A_CARDS: host.url('/card.json'),
    });
    try {
      await development.ctx.federation.refresh();
      const redirected = await provenanceOf(development);
      assert.equal(redirected?.verification, 'signed-untrusted');
      assert.match(redirected?.reason ?? '', /answered 302: a trust root is read where it is named/);
      assert.ok(!host.requests.some((request) => request.path === '/moved-did.json'));

      host.files.set('/.well-known/did.json', { body: JSON.stringify(didDocument) });
      await development.ctx.federation.refresh();
      assert.equal((await provenanceOf(development))?.verification, 'verified');
    } finally {
      await development.close();
      await host.close();
    }
  });
});

describe('a JWKS the operator pinned for a card origin (FEDERATION_A2A_JWKS)', () => {
  const byUrl = new CardHost();
  const byFile = new CardHost();
  let registry: TestRegistry;
  let pinned: KeyPair;
  let domainKey: KeyPair;
  let attacker: KeyPair;
  let dir: string;

  const provenance = async (host: CardHost, path: string): Promise<Provenance | undefined> => {
    const response = await registry.app.inject({
      method: 'GET',
      url: `/api/federation/entries/${encodeURIComponent(`a2a:${host.url(path)}`)}`,
    });
    return response.statusCode === 200 ? response.json<Entry>().provenance : undefined;
  };

  before(async () => {
    await Promise.all([byUrl.start(), byFile.start()]);
    [pinned, domainKey, attacker] = await Promise.all([keyPair(), keyPair(), keyPair()]);
    const jwks = JSON.stringify({ keys: [{ ...pinned.jwk, kid: 'pinned-1', alg: 'ES256', use: 'sig' }] });
    byUrl.files.set('/keys/jwks.json', { body: jwks });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pinned-jwks-'));
    fs.writeFileSync(path.join(dir, 'jwks.json'), jwks);
    // The origin's did.json names another key: a pinned JWKS replaces did:web as the trust root.
    for (const host of [byUrl, byFile]) {
      host.files.set('/.well-known/did.json', {
        body: JSON.stringify({
          id: host.did,
          verificationMethod: [
            {
              id: `${host.did}#key-1`,
              type: 'JsonWebKey2020',
              controller: host.did,
              publicKeyJwk: domainKey.jwk,
            },
          ],
          assertionMethod: [`${host.did}#key-1`],
        }),
      });
      host.files.set('/attacker-jwks.json', {
        body: JSON.stringify({ keys: [{ ...attacker.jwk, kid: 'evil' }] }),
      });
      const good = card('Pinned Planner', 'Signed with the pinned key');
      good.signatures = [await sign(good, pinned, { kid: 'pinned-1' })];
      host.files.set('/pinned.json', { body: JSON.stringify(good) });
      const byDomain = card('Domain Planner', 'Signed with the did:web key only');
      byDomain.signatures = [await sign(byDomain, domainKey, { kid: `${host.did}#key-1` })];
      host.files.set('/domain.json', { body: JSON.stringify(byDomain) });
      const jku = card('Jku Planner', 'Names its own key source');
      jku.signatures = [await sign(jku, attacker, { kid: 'evil', jku: host.url('/attacker-jwks.json') })];
      host.files.set('/jku.json', { body: JSON.stringify(jku) });
      const forged = card('Forged Planner', 'The attacker signs under the pinned kid');
      forged.signatures = [
        await sign(forged, attacker, { kid: 'pinned-1', jku: host.url('/attacker-jwks.json') }),
      ];
      host.files.set('/forged.json', { body: JSON.stringify(forged) });
    }
    registry = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_A2A_CARDS: [byUrl, byFile]
        .flatMap((host) =>
          ['/pinned.json', '/domain.json', '/jku.json', '/forged.json'].map((p) => host.url(p)),
        )
        .join(','),
      FEDERATION_A2A_JWKS: `${byUrl.origin}=${byUrl.url('/keys/jwks.json')}, ${byFile.origin}=${path.join(dir, 'jwks.json')}`,
    });
    await registry.ctx.federation.refresh();
  });
  after(async () => {
    await registry.close();
    await Promise.all([byUrl.close(), byFile.close()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a card signed with a key of the pinned JWKS (URL or file) is verified, with its kid', async () => {
    for (const host of [byUrl, byFile]) {
      const found = await provenance(host, '/pinned.json');
      assert.equal(found?.verification, 'verified', JSON.stringify(found));
      assert.equal(found?.kid, 'pinned-1');
      assert.equal(found?.did, undefined, 'no DID vouched for it');
    }
    assert.ok(byUrl.requests.some((request) => request.path === '/keys/jwks.json'));
    assert.ok(!byFile.requests.some((request) => request.path === '/keys/jwks.json'));
  });

  test("the pinned JWKS replaces the origin's did:web: a card signed only by the did.json key is untrusted", async () => {
    for (const host of [byUrl, byFile]) {
      const found = await provenance(host, '/domain.json');
      assert.equal(found?.verification, 'signed-untrusted');
      assert.match(found?.reason ?? '', /is not one key of the pinned JWKS/);
      assert.ok(!host.requests.some((request) => request.path === '/.well-known/did.json'));
    }
  });

  test('a jku is still never trusted: its own key is untrusted, the pinned kid forged is invalid', async () => {
    for (const host of [byUrl, byFile]) {
      const jku = await provenance(host, '/jku.json');
      assert.equal(jku?.verification, 'signed-untrusted');
      assert.match(jku?.reason ?? '', /jku .* is not a trust root/);
      const forged = await provenance(host, '/forged.json');
      assert.equal(forged?.verification, 'invalid');
      assert.match(forged?.reason ?? '', /does not verify/);
      assert.ok(
        !host.requests.some((request) => request.path === '/attacker-jwks.json'),
        'the jku was never fetched',
      );
    }
  });

  test('a pinned JWKS that is missing leaves every signed card untrusted, with the reason', async () => {
    byUrl.files.delete('/keys/jwks.json');
    await registry.ctx.federation.refresh();
    const found = await provenance(byUrl, '/pinned.json');
    // The card itself did not change (no ETag, no Cache-Control): it is read and verified again.
    assert.equal(found?.verification, 'signed-untrusted');
    assert.match(found?.reason ?? '', /jwks\.json answered 404/);
  });

  test('a malformed FEDERATION_A2A_JWKS is refused at start, naming the setting', () => {
    for (const value of [
      'https://agents.example',
      'https://agents.example/path=https://k.example/j',
      'https://a.example=relative/file.json',
      'https://a.example=ftp://k.example/j',
    ])
      assert.throws(
        () => loadConfig({ DATABASE_URL: 'sqlite::memory:', FEDERATION_A2A_JWKS: value }),
        /FEDERATION_A2A_JWKS must be/,
      );
  });
});

const base64url = (value: bigint): string => {
  const hex = value.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex').toString('base64url');
};
const modInverse = (value: bigint, modulus: bigint): bigint => {
  let [a, b, x, y] = [value % modulus, modulus, 1n, 0n];
  while (b !== 0n) {
    const q = a / b;
    [a, b, x, y] = [b, a - q * b, y, x - q * y];
  }
  return ((x % modulus) + modulus) % modulus;
};

/**
 * A real RS256 key pair whose public exponent is about as long as its 3072-bit modulus: a small private
 * exponent d, and e its inverse. Its signatures verify; each verification costs a 3,000-bit exponent.
 */
async function hugeExponentRsaKey(): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const p = generatePrimeSync(1536, { bigint: true });
  const q = generatePrimeSync(1536, { bigint: true });
  const phi = (p - 1n) * (q - 1n);
  let d = generatePrimeSync(256, { bigint: true });
  while (phi % d === 0n) d = generatePrimeSync(256, { bigint: true });
  const e = modInverse(d, phi);
  const jwk: JWK = { kty: 'RSA', n: base64url(p * q), e: base64url(e) };
  const privateJwk: JWK = {
    ...jwk,
    d: base64url(d),
    p: base64url(p),
    q: base64url(q),
    dp: base64url(d % (p - 1n)),
    dq: base64url(d % (q - 1n)),
    qi: base64url(modInverse(q, p)),
  };
  return { privateKey: (await importJWK(privateJwk, 'RS256')) as CryptoKey, jwk };
}

describe('what one card costs to verify is bounded', () => {
  const host = new CardHost();
  let registry: TestRegistry;
  let exponentBits = 0;

  const entry = async (path: string): Promise<Entry | undefined> => {
    const response = await registry.app.inject({
      method: 'GET',
      url: `/api/federation/entries/${encodeURIComponent(`a2a:${host.url(path)}`)}`,
    });
    return response.statusCode === 200 ? response.json<Entry>() : undefined;
  };

  before(async () => {
    await host.start();
    const huge = await hugeExponentRsaKey();
    exponentBits = Buffer.from(huge.jwk.e ?? '', 'base64url').length * 8;
    const ordinary = await keyPair();
    const did = host.did;
    host.files.set('/.well-known/did.json', {
      body: JSON.stringify({
        id: did,
        verificationMethod: [
          { id: `${did}#huge-e`, type: 'JsonWebKey2020', controller: did, publicKeyJwk: huge.jwk },
          { id: `${did}#key-1`, type: 'JsonWebKey2020', controller: did, publicKeyJwk: ordinary.jwk },
        ],
        assertionMethod: [`${did}#huge-e`, `${did}#key-1`],
      }),
    });
    const signRs256 = async (
      body: Record<string, unknown>,
    ): Promise<{ protected: string; signature: string }> => {
      const { signatures: _ignored, ...unsigned } = body;
      const jws = await new FlattenedSign(new TextEncoder().encode(canonicalize(unsigned)))
        .setProtectedHeader({ alg: 'RS256', kid: `${did}#huge-e` })
        .sign(huge.privateKey);
      return { protected: jws.protected as string, signature: jws.signature };
    };
    const one = card('Huge Exponent', 'Signed by a key with a huge public exponent');
    one.signatures = [await signRs256(one)];
    host.files.set('/huge-e.json', { body: JSON.stringify(one) });
    // The same costly signature forty times, then one that would verify with an ordinary key.
    const many = card('Many Signatures', 'Forty costly signatures, then a good one');
    const costly = await signRs256(many);
    many.signatures = [
      ...Array.from({ length: 40 }, () => costly),
      await sign(many, ordinary, { kid: `${did}#key-1` }),
    ];
    host.files.set('/many.json', { body: JSON.stringify(many) });
    registry = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      FEDERATION_A2A_ALLOW_HTTP_TRUST_ROOTS: 'true',
      FEDERATION_A2A_CARDS: ['/huge-e.json', '/many.json'].map((path) => host.url(path)).join(','),
    });
    await registry.ctx.federation.refresh();
  });
  after(async () => {
    await registry.close();
    await host.close();
  });

  test('an RSA key whose public exponent is over 32 bits is refused with the reason, even when the signature is good', async () => {
    assert.ok(exponentBits > 2000, `the test key's e has ${exponentBits} bits`);
    const found = await entry('/huge-e.json');
    assert.equal(found?.provenance.verification, 'invalid');
    assert.match(
      found?.provenance.reason ?? '',
      /signatures\[0\]: did:web:\S+#huge-e: its RSA public exponent e has \d{4} bits, more than 32/,
    );
  });

  test('at most five signatures of a card are checked; the rest are named as not checked', async () => {
    const found = await entry('/many.json');
    const reason = found?.provenance.reason ?? '';
    assert.equal(found?.provenance.verification, 'invalid');
    assert.equal(reason.match(/its RSA public exponent/g)?.length, 5, reason);
    assert.match(reason, /36 signatures after the first 5 were not checked \(at most 5 per card\)/);
  });
});
