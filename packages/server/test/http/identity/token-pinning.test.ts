import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { v7 as uuidv7 } from 'uuid';
import { TEST_PUBLIC_URL, bearer } from '@agent-registry/testkit';
import { type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { startWithAgent } from '../../support/registry-setup.js';

describe('tokens are typed JWTs for this registry alone', () => {
  let registry: TestRegistry;
  let agent: Registered;
  before(async () => {
    ({ registry, agent } = await startWithAgent());
  });
  after(() => registry?.close());

  /** A token signed with the registry's own key (as anything else that key signs would be). */
  const mint = (header: Record<string, unknown>, aud: string | string[]) => {
    const now = Math.floor(registry.clock.now() / 1000);
    return new SignJWT({ jti: uuidv7() })
      .setProtectedHeader({ alg: 'EdDSA', kid: registry.ctx.tokens.signingKey.kid, ...header })
      .setSubject(agent.did)
      .setIssuer(TEST_PUBLIC_URL)
      .setAudience(aud)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(registry.ctx.tokens.signingKey.privateKey);
  };
  const call = async (token: string) =>
    registry.app.inject({ url: '/api/reviews/my', headers: bearer(token) });

  test('the key signs, typ JWT, one audience: accepted', async () => {
    assert.equal((await call(await mint({ typ: 'JWT' }, TEST_PUBLIC_URL))).statusCode, 200);
  });

  test('a JWS typed otherwise (JOSE, as agent cards are) or untyped is refused', async () => {
    for (const header of [{ typ: 'JOSE' }, {}]) {
      const answer = await call(await mint(header, TEST_PUBLIC_URL));
      assert.equal(answer.statusCode, 401, JSON.stringify(header));
      assert.equal(answer.json().code, 'TOKEN_INVALID');
    }
  });

  test('an aud array, even one naming this registry, is refused', async () => {
    const answer = await call(await mint({ typ: 'JWT' }, [TEST_PUBLIC_URL, 'https://other.example']));
    assert.equal(answer.statusCode, 401);
    assert.equal(answer.json().code, 'TOKEN_INVALID');
    assert.equal((await call(await mint({ typ: 'JWT' }, [TEST_PUBLIC_URL]))).statusCode, 401);
  });
});
