import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { agentPath } from '@agent-registry/testkit';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { startListeningRegistry, type ListeningRegistry } from '../support/faces-helpers.js';

const CHROMIUM = '/usr/bin/chromium';

describe('nosniff on every answer', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry?.close());

  test('JSON answers, errors and pages all carry X-Content-Type-Options: nosniff', async () => {
    const agent = await register(registry);
    const answers = await Promise.all(
      [
        { url: agentPath(agent.did) },
        { url: '/api/agents/search?q=translator' },
        { url: '/api/nothing-here' },
        { url: '/api/agents/%E0%A4%A' },
        { url: '/openapi.json' },
        { url: '/healthz' },
        { url: '/docs' },
        { url: '/', headers: { accept: 'text/html' } },
      ].map(({ url, headers }) => registry.app.inject({ url, headers })),
    );
    for (const answer of answers)
      assert.equal(answer.headers['x-content-type-options'], 'nosniff', answer.raw.req.url);
  });
});

describe('/docs (Swagger UI) may not be framed and loads only its own scripts', () => {
  let registry: ListeningRegistry;
  before(async () => {
    registry = await startListeningRegistry();
  });
  after(() => registry?.close());

  test("the page and its assets carry a CSP with frame-ancestors 'none'", async () => {
    for (const path of [
      '/docs',
      '/docs/',
      '/docs/static/index.html',
      '/docs/static/swagger-initializer.js',
    ]) {
      const response = await fetch(`${registry.url}${path}`, { redirect: 'manual' });
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.match(csp, /script-src 'self'(;|$)/, path);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', path);
    }
  });

  test('Swagger UI still renders the API reference in Chromium, with no CSP violation', async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing (apt-get install -y chromium)`);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto(`${registry.url}/docs/static/index.html`);
      await page.waitForSelector('.swagger-ui .info .title');
      await page.waitForSelector('.opblock-tag');
      const title = await page.textContent('.swagger-ui .info .title');
      assert.match(title ?? '', /Agent Registry/);
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
    }
  });
});
