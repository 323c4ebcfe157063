import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseJson, runCli, startRegistry, tempHome, type RunningRegistry } from './harness.js';

/** A registry reached at 127.0.0.1 that calls itself localhost, as `npm start` does by default. */
describe('register --registry http://127.0.0.1:PORT against PUBLIC_URL http://localhost:PORT', () => {
  let registry: RunningRegistry;
  const home = tempHome();

  before(async () => {
    registry = await startRegistry({ PUBLIC_URL: 'http://localhost:8080' });
  });
  after(async () => {
    await registry.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('signs for the URL the registry names, so registering and logging in work', async () => {
    const init = await runCli(['init', '--name', 'By address', '--capability', 'echo'], { home });
    assert.equal(init.code, 0, init.stderr);
    const register = await runCli(['register', '--registry', registry.url, '--json'], { home });
    assert.equal(register.code, 0, register.stderr);
    const { did } = parseJson<{ did: string }>(register);
    const login = await runCli(['login', '--json'], { home });
    assert.equal(login.code, 0, login.stderr);
    assert.equal(parseJson<{ did: string }>(login).did, did);
  });
});
