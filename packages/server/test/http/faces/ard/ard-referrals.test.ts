import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../../../src/kernel/config.js';
import { registerNamed } from '../../../support/discovery-helpers.js';
import { startListeningRegistry, type ListeningRegistry } from '../../../support/faces-helpers.js';
import type { SearchAnswer } from '../../../support/ard-answers.js';

describe('ARD federation: referrals to the registries ARD_REFERRALS names', () => {
  let registry: ListeningRegistry;
  const search = async (body: unknown) => {
    const response = await fetch(`${registry.url}/ard/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as SearchAnswer };
  };

  before(async () => {
    registry = await startListeningRegistry({
      ARD_REFERRALS: ' https://finder.example.org/api/ard/ , http://peer.example.com:8443 ',
    });
    await registerNamed(registry, 'Referral Weather', { tags: ['weather'] });
  });
  after(async () => registry.close());

  test('federation referrals answers each as an ARD referral object; none and auto answer none', async () => {
    const referred = await search({ query: { text: 'weather' }, federation: 'referrals' });
    assert.equal(referred.status, 200);
    assert.equal(referred.json.results.length, 1);
    assert.deepEqual(referred.json.referrals, [
      {
        identifier: 'urn:air:finder.example.org:registry:api:ard',
        displayName: 'ARD registry at finder.example.org/api/ard',
        type: 'application/ai-registry+json',
        url: 'https://finder.example.org/api/ard/search',
      },
      {
        identifier: 'urn:air:peer.example.com:registry:root',
        displayName: 'ARD registry at peer.example.com:8443',
        type: 'application/ai-registry+json',
        url: 'http://peer.example.com:8443/search',
      },
    ]);
    for (const item of referred.json.referrals ?? []) {
      const { identifier } = item as { identifier: string };
      // ard-spec's URN pattern (spec/schemas/ai-catalog.schema.json).
      assert.match(identifier, /^urn:air:[a-zA-Z0-9.-]+(:[a-zA-Z0-9._-]+)+$/);
    }
    for (const federation of ['none', 'auto', undefined]) {
      const answer = await search({ query: { text: 'weather' }, ...(federation ? { federation } : {}) });
      assert.equal(answer.status, 200);
      assert.equal(answer.json.results.length, 1);
      assert.ok(!('referrals' in answer.json), JSON.stringify(answer.json));
    }
  });

  test('a referral that is not a followable http(s) registry URL is refused at start', () => {
    const refusedWith = (value: string, message: RegExp) =>
      assert.throws(
        () => loadConfig({ ARD_REFERRALS: value, PUBLIC_URL: 'https://registry.example' }),
        message,
      );
    refusedWith('ftp://finder.example.org/ard', /ARD_REFERRALS must list http\(s\) URLs/);
    refusedWith('not a url', /ARD_REFERRALS must be comma-separated http\(s\) URLs/);
    refusedWith('https://user:secret@finder.example.org/ard', /may not carry credentials/);
    refusedWith('https://finder.example.org/ard?key=1', /may not carry credentials, a query or a fragment/);
    refusedWith('https://[::1]/ard', /need a host name/);
    refusedWith('https://registry.example/ard', /may not name this registry's own ARD API/);
    refusedWith('https://a.example/ard,https://a.example/ard/', /names https:\/\/a\.example\/ard twice/);
    const many = Array.from({ length: 21 }, (_, index) => `https://r${index}.example/ard`).join(',');
    refusedWith(many, /at most 20/);
    assert.deepEqual(loadConfig({}).network.ardReferrals, []);
  });
});
