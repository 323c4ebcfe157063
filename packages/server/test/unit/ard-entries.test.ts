import assert from 'node:assert/strict';
import { test } from 'node:test';
import { representativeQueries } from '../../src/modules/ard/entries.js';
import { relevanceScore } from '../../src/modules/ard/ard-query.js';
import { didToUrn, urnToDid } from '../../src/modules/ard/urn.js';

const DOMAIN = 'registry.example.com%3A8443';
const HOST = 'registry.example.com';

test('URN and DID map both ways: a registry did:web and a did:pkh', () => {
  const web = `did:web:${DOMAIN}:agent:${'ab'.repeat(16)}`;
  assert.equal(didToUrn(web, HOST), `urn:air:${HOST}:agents:${'ab'.repeat(16)}`);
  assert.equal(urnToDid(didToUrn(web, HOST), HOST, DOMAIN), web);
  const pkh = 'did:pkh:eip155:1:0x52908400098527886E0F7030069857D2E4169EE7';
  assert.equal(
    didToUrn(pkh, HOST),
    `urn:air:${HOST}:agents:pkh:eip155:1:0x52908400098527886E0F7030069857D2E4169EE7`,
  );
  assert.equal(urnToDid(didToUrn(pkh, HOST), HOST, DOMAIN), pkh);
  // The NID, the publisher and hex are matched case-insensitively; the DID comes back canonical.
  assert.equal(urnToDid(`URN:AIR:${HOST.toUpperCase()}:agents:${'AB'.repeat(16)}`, HOST, DOMAIN), web);
  assert.equal(
    urnToDid(`urn:air:${HOST}:agents:pkh:eip155:1:0x52908400098527886e0f7030069857d2e4169ee7`, HOST, DOMAIN),
    pkh,
  );
});

test('URNs: malformed ones are 400, another publisher or namespace 404', () => {
  const status = (urn: string) => {
    try {
      urnToDid(urn, HOST, DOMAIN);
      return 200;
    } catch (error) {
      return (error as { status: number }).status;
    }
  };
  assert.equal(status('urn:air:'), 400);
  assert.equal(status(`urn:air:${HOST}:agents:a/b`), 400);
  assert.equal(status(`urn:air:${HOST}:agents:pkh:eip155:1:0x12`), 400);
  assert.equal(status(`urn:air:${HOST}:agents:${'a'.repeat(31)}`), 400);
  assert.equal(status(`urn:air:other.org:agents:${'a'.repeat(32)}`), 404);
  assert.equal(status(`urn:air:${HOST}:registry:ard`), 404);
});

test('representative queries: 2 to 5, from capabilities, tags, description and name, no duplicates', () => {
  const many = representativeQueries(
    'Atlas',
    'Maps the world. Fast.',
    [
      { type: 'geocode', description: 'Turn an address into coordinates. Any country.' },
      { type: 'reverse-geocode' },
      { type: 'route' },
      { type: 'elevation' },
    ],
    ['maps', 'geo', 'travel', 'extra'],
  );
  assert.deepEqual(many, [
    'Turn an address into coordinates',
    'reverse geocode for me',
    'route for me',
    'find an agent for maps, geo, travel',
    'Maps the world',
  ]);
  const few = representativeQueries('Solo', null, [], []);
  assert.deepEqual(few, ['use Solo', 'find the agent Solo']);
});

test('score: the first match 100, falling with rank, never below 1, 0 without matches', () => {
  assert.equal(relevanceScore(0, 1), 100);
  assert.equal(relevanceScore(0, 1000), 100);
  assert.equal(relevanceScore(499, 1000), 50);
  assert.equal(relevanceScore(999_999, 1_000_000), 1);
  assert.equal(relevanceScore(0, 0), 0);
});
