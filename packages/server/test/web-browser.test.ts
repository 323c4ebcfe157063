import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './browser.js';
import { startRegistry, type TestRegistry } from './helpers.js';
import { XSS_DESCRIPTION, XSS_NAME, seedWebFixture, type WebFixture } from './web-fixtures.js';

/** Screenshots for people to look at; gitignored. */
const SCREENSHOTS = fileURLToPath(new URL('../test-output/screenshots/', import.meta.url));
const VIEWPORTS = {
  desktop: { width: 1280, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

/** The few browser globals the tests read (the server's tsconfig has no DOM library). */
interface BrowserGlobals {
  document: {
    activeElement: { id: string; textContent: string | null } | null;
    querySelector(selector: string): { textContent: string | null } | null;
    documentElement: { scrollWidth: number };
  };
  innerWidth: number;
}
const focusedId = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as BrowserGlobals).document.activeElement?.id ?? '');
const focusedText = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as BrowserGlobals).document.activeElement?.textContent ?? '');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

describe('web pages in a real browser', () => {
  let registry: TestRegistry;
  let fixture: WebFixture;
  let origin: string;
  let browser: Browser;
  let axeSource: string;
  /** Console errors, page errors and dialogs, from every page of every context. */
  const problems: string[] = [];

  before(async () => {
    registry = await startRegistry();
    await registry.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(registry.app.server.address() as AddressInfo).port}`;
    const logo = /href="(\/assets\/logo\.[0-9a-f]+\.svg)"/.exec(
      (await registry.app.inject({ url: '/join', headers: { accept: 'text/html' } })).body,
    )?.[1];
    fixture = await seedWebFixture(registry, `${origin}${logo ?? ''}`);
    axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    const launched = await launchChromium();
    browser = launched.browser;
    console.log(`browser: ${launched.source}`);
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await registry?.close();
  });

  async function newPage(
    viewport: { width: number; height: number } = VIEWPORTS.desktop,
    options: { javaScriptEnabled?: boolean; colorScheme?: 'light' | 'dark' } = {},
  ): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport, ...options });
    const page = await context.newPage();
    page.on('console', (message) => {
      // A page answered with 404 on purpose logs its own status; any other failed load is a problem.
      const deliberate404 = message.location().url === page.url() && /status of 404/.test(message.text());
      if (message.type() === 'error' && !deliberate404)
        problems.push(`console on ${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error on ${page.url()}: ${error.message}`));
    page.on('dialog', (dialog) => {
      problems.push(`dialog on ${page.url()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
    return { context, page };
  }

  const agentUrl = (did: string) => `${origin}/agents/${encodeURIComponent(did)}`;

  async function axe(page: Page): Promise<AxeViolation[]> {
    // Evaluated through the DevTools protocol, so the page's CSP (no inline script) stays in force.
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
      const runner = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } })
        .axe;
      return (await runner.run()).violations;
    });
    return violations.filter(
      (violation) => violation.impact === 'serious' || violation.impact === 'critical',
    );
  }

  it('searches as the visitor types, and the URL and back button follow', async () => {
    const { context, page } = await newPage();
    await page.goto(origin);
    assert.equal(await page.locator('h1').textContent(), 'Find an agent');
    assert.equal(await page.locator('.cards > li').count(), 20);
    await page.locator('#q').pressSequentially('polyglot', { delay: 20 });
    await page.waitForURL(/\?q=polyglot$/);
    await page.locator('#results-title', { hasText: '1 agent matches' }).waitFor();
    assert.deepEqual(await page.locator('.cards h3').allTextContents(), ['Polyglot Translator']);
    // Typing replaced only the results: the focus stayed in the search box.
    assert.equal(await focusedId(page), 'q');
    await page.goBack();
    await page.waitForURL(/\/(\?q=polyglo)?$/);
    await context.close();
  });

  it('filters by capability, tags, minimum reputation and sort', async () => {
    const { context, page } = await newPage();
    await page.goto(origin);
    await page.locator('#capability').fill('summarization');
    await page.locator('#results-title', { hasText: '11 agents match' }).waitFor();
    await page.locator('#tags').fill('nomatch');
    await page.locator('#results-title', { hasText: '0 agents match' }).waitFor();
    await page.locator('#tags').fill('text');
    await page.locator('#results-title', { hasText: '11 agents match' }).waitFor();
    await page.locator('#sort').selectOption('created_at');
    await page.locator('#order').selectOption('asc');
    await page.waitForURL(/sort=created_at&order=asc/);
    await page.waitForFunction(
      () =>
        (globalThis as unknown as BrowserGlobals).document.querySelector('.cards h3')?.textContent ===
        'Helper 00',
    );
    await page.locator('#capability').fill('');
    await page.locator('#tags').fill('');
    // Reputation v2: twelve unverified reviews by fresh accounts hold the translator at the neutral 50
    // (docs/reputation.md); agents without reviews score 0.
    await page.locator('#min_reputation').fill('40');
    await page.locator('#results-title', { hasText: '1 agent matches' }).waitFor();
    assert.deepEqual(await page.locator('.cards h3').allTextContents(), ['Polyglot Translator']);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('min_reputation'), '40');
    // The same URL without JavaScript renders the same results on the server.
    const { context: plain, page: noScript } = await newPage(VIEWPORTS.desktop, { javaScriptEnabled: false });
    await noScript.goto(url.href);
    assert.deepEqual(await noScript.locator('.cards h3').allTextContents(), ['Polyglot Translator']);
    assert.equal(await noScript.locator('#min_reputation').inputValue(), '40');
    await plain.close();
    await context.close();
  });

  it('follows the result pages', async () => {
    const { context, page } = await newPage();
    await page.goto(`${origin}/?sort=created_at&order=asc`);
    const first = await page.locator('.cards h3').allTextContents();
    assert.equal(first.length, 20);
    await page.getByRole('link', { name: 'Next →' }).click();
    await page.waitForURL(/offset=20/);
    const second = await page.locator('.cards h3').allTextContents();
    assert.equal(second.length, fixture.activeCount - 20);
    assert.ok(!second.some((name) => first.includes(name)), 'the second page repeats no agent');
    await page.getByRole('link', { name: '← Previous' }).click();
    await page.waitForURL((url) => !url.search.includes('offset'));
    assert.deepEqual(await page.locator('.cards h3').allTextContents(), first);
    await context.close();
  });

  it('opens an agent: capabilities, schemas, reviews with their chart and pages, and a snippet', async () => {
    const { context, page } = await newPage();
    await page.goto(`${origin}/?q=polyglot`);
    await page.getByRole('link', { name: 'Polyglot Translator' }).click();
    await page.waitForURL(agentUrl(fixture.translator.did));
    assert.equal(await page.locator('h1').textContent(), 'Polyglot Translator');
    assert.equal(await page.locator('.capability h3').textContent(), 'translation');
    await page.getByText('Input schema').click();
    assert.match(
      await page.locator('.capability details pre').first().innerText(),
      /"enum": \[\s*"fr",\s*"de"\s*\]/,
    );
    assert.equal(await page.locator('.review').count(), 10);
    assert.equal(await page.locator('.badge-verified').count(), 0, 'the verified review is the oldest');
    assert.equal(await page.locator('svg.chart rect.chart-bar').count(), 10);
    const bars = await page
      .locator('svg.chart rect.chart-bar')
      .evaluateAll((rects) => rects.map((rect) => Number(rect.getAttribute('height'))));
    // Ratings 10, 9, 8, 7, 6 from twelve reviewers: buckets 6-10 have bars, 1-5 none.
    assert.deepEqual(
      bars.map((height) => height > 0),
      [false, false, false, false, false, true, true, true, true, true],
    );
    await page.getByRole('link', { name: 'Next →' }).click();
    await page.waitForURL(/reviews_offset=10#reviews$/);
    assert.equal(await page.locator('.review').count(), fixture.reviewCount - 10);
    assert.equal(await page.locator('.badge-verified').count(), 1);
    const cli = await page.locator('#snippet-cli + p + .code pre').innerText();
    assert.match(cli, /^agent-registry invoke 'did:web:localhost%3A8080:agent:[0-9a-f]{32}' 'translation'/);
    assert.match(cli, /--input '\{"text":"\.\.\.","target":"fr"\}'/);
    const links = await page
      .locator('.links a')
      .evaluateAll((anchors) => anchors.map((a) => a.getAttribute('href')));
    const did = encodeURIComponent(fixture.translator.did);
    assert.ok(links.includes(`/a2a/${did}/.well-known/agent-card.json`), 'A2A card link');
    assert.ok(links.includes(`/mcp/agents/${did}`), 'MCP link for an invocable agent');
    await context.close();
  });

  it('marks a deactivated agent and answers an unknown DID with the 404 page', async () => {
    const { context, page } = await newPage();
    await page.goto(agentUrl(fixture.deactivated.did));
    assert.match(await page.locator('.status-inactive').innerText(), /Deactivated/);
    assert.equal(await page.locator('#snippet-cli').count(), 0, 'no call snippet for a deactivated agent');
    const response = await page.goto(
      agentUrl('did:web:localhost%3A8080:agent:0123456789abcdef0123456789abcdef'),
    );
    assert.equal(response?.status(), 404);
    assert.equal(await page.locator('h1').textContent(), 'Not found');
    assert.ok(await page.getByRole('link', { name: 'Search the registry' }).isVisible(), 'a way back');
    await context.close();
  });

  it('renders the hostile profile inert', async () => {
    const { context, page } = await newPage();
    const before = problems.length;
    await page.goto(agentUrl(fixture.xss.did));
    await page.goto(`${origin}/?q=exploit`);
    await page.goto(agentUrl(fixture.translator.did));
    await page.goto(agentUrl(fixture.xss.did));
    assert.equal(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss), undefined);
    assert.equal(await page.locator('h1').textContent(), XSS_NAME);
    assert.equal(await page.locator('p.lead').textContent(), XSS_DESCRIPTION);
    assert.equal(await page.locator('script').count(), 1, 'only the registry script');
    const hrefs = await page
      .locator('a[href], img[src]')
      .evaluateAll((elements) =>
        elements.map((element) => element.getAttribute('href') ?? element.getAttribute('src') ?? ''),
      );
    assert.deepEqual(
      hrefs.filter((href) => /^\s*javascript:/i.test(href)),
      [],
    );
    assert.equal(await page.locator('img.avatar').count(), 0);
    assert.deepEqual(problems.slice(before), [], 'no dialog, no error');
    await context.close();
  });

  it('works with the keyboard alone', async () => {
    const { context, page } = await newPage();
    await page.goto(origin);
    await page.keyboard.press('Tab');
    assert.equal(await focusedText(page), 'Skip to content');
    await page.keyboard.press('Enter');
    let focused = '';
    for (let step = 0; step < 10 && focused !== 'q'; step += 1) {
      await page.keyboard.press('Tab');
      focused = await focusedId(page);
    }
    assert.equal(focused, 'q', 'Tab reaches the search box');
    await page.keyboard.type('translator');
    await page.keyboard.press('Enter');
    await page.locator('#results-title', { hasText: '1 agent matches' }).waitFor();
    for (let step = 0; step < 20; step += 1) {
      await page.keyboard.press('Tab');
      if ((await focusedText(page)) === 'Polyglot Translator') break;
    }
    await page.keyboard.press('Enter');
    await page.waitForURL(agentUrl(fixture.translator.did));
    // Disclosure widgets open from the keyboard too.
    await page.locator('details.schema summary').first().focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('details.schema').first().getAttribute('open'), '');
    await context.close();
  });

  it('has no serious or critical axe violations, in light and dark, and writes screenshots', async () => {
    const pages: [string, string][] = [
      ['home', `${origin}/`],
      ['search', `${origin}/?q=text&capability=summarization`],
      ['agent', agentUrl(fixture.translator.did)],
      ['agent-deactivated', agentUrl(fixture.deactivated.did)],
      ['agent-xss', agentUrl(fixture.xss.did)],
      ['stats', `${origin}/stats`],
      ['join', `${origin}/join`],
      ['not-found', `${origin}/agents/did%3Aweb%3Anobody`],
      ...(existsSync(new URL('../../../docs/signing.md', import.meta.url))
        ? [['signing', `${origin}/docs/signing`] as [string, string]]
        : []),
    ];
    const found: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const [size, viewport] of Object.entries(VIEWPORTS)) {
        const { context, page } = await newPage(viewport, { colorScheme });
        for (const [name, url] of pages) {
          await page.goto(url);
          await page.screenshot({ path: `${SCREENSHOTS}${name}-${size}-${colorScheme}.png`, fullPage: true });
          // What the first screen shows, at a size people can read.
          await page.screenshot({ path: `${SCREENSHOTS}${name}-${size}-${colorScheme}-fold.png` });
          if (size === 'desktop' || name === 'agent') {
            for (const violation of await axe(page)) {
              found.push(
                `${name} (${colorScheme}, ${size}): ${violation.id} ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
              );
            }
          }
        }
        const overflow = await page.evaluate(() => {
          const browser = globalThis as unknown as BrowserGlobals;
          return browser.document.documentElement.scrollWidth - browser.innerWidth;
        });
        assert.ok(overflow <= 0, `${size}: the agent page scrolls sideways by ${overflow}px`);
        await context.close();
      }
    }
    assert.deepEqual(found, []);
  });

  it('logged no console error, page error or dialog on any page', () => {
    assert.deepEqual(problems, []);
  });
});
