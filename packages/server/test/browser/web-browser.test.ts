import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import { bearer } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { XSS_DESCRIPTION, XSS_NAME, seedWebFixture, type WebFixture } from '../support/web-fixtures.js';

/** Screenshots for people to look at; gitignored. */
const SCREENSHOTS = fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url));
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
    // Back leads to the state before the last search: the home page, or a search for part of the word
    // when the typing was slow enough for a search to run before its last letters.
    await page.goBack();
    await page.waitForURL(/\/(\?q=(p|po|pol|poly|polyg|polygl|polyglo))?$/);
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
      ...(existsSync(new URL('../../../../docs/signing.md', import.meta.url))
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
          // Every page, not only the last one: nothing may make a page scroll sideways.
          const overflow = await page.evaluate(() => {
            const browser = globalThis as unknown as BrowserGlobals;
            return browser.document.documentElement.scrollWidth - browser.innerWidth;
          });
          assert.ok(overflow <= 0, `${name} (${size}): the page scrolls sideways by ${overflow}px`);
          if (size === 'desktop' || name === 'agent') {
            for (const violation of await axe(page)) {
              found.push(
                `${name} (${colorScheme}, ${size}): ${violation.id} ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
              );
            }
          }
        }
        await context.close();
      }
    }
    assert.deepEqual(found, []);
  });

  /** One brokered call to the translator, so its page shows the service-record table. */
  async function brokeredCall(): Promise<void> {
    const invoking = registry.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(fixture.xss.token),
      payload: {
        target_did: fixture.translator.did,
        capability: 'translation',
        input: { text: 'a', target: 'fr' },
      },
    });
    const worker = (method: 'GET' | 'POST', url: string, payload?: object) =>
      registry.app.inject({ method, url, headers: bearer(fixture.translator.token), payload });
    let taskId: string | undefined;
    while (taskId === undefined) {
      taskId = (await worker('GET', '/api/agent/tasks?wait=5')).json<{ tasks: { task_id: string }[] }>()
        .tasks[0]?.task_id;
    }
    assert.equal((await worker('POST', `/api/agent/tasks/${taskId}/accept`)).statusCode, 200);
    assert.equal(
      (await worker('POST', `/api/agent/tasks/${taskId}/result`, { output: { text: 'b' } })).statusCode,
      200,
    );
    assert.equal((await invoking).statusCode, 200);
  }

  /** Whether every cell of the service-record table lies inside the visible part of its panel. */
  const serviceTableFits = (page: Page) =>
    page.evaluate(() => {
      type Box = { left: number; right: number };
      type Element = { getBoundingClientRect(): Box; scrollWidth: number; clientWidth: number };
      const doc = (
        globalThis as unknown as {
          document: { querySelector(s: string): Element | null; querySelectorAll(s: string): Element[] };
        }
      ).document;
      const scroller = doc.querySelector('section[aria-labelledby="service-title"] .table-scroll');
      if (scroller === null) return 'no service-record table';
      if (scroller.scrollWidth > scroller.clientWidth)
        return `scrolls by ${scroller.scrollWidth - scroller.clientWidth}px`;
      const box = scroller.getBoundingClientRect();
      const outside = Array.from(doc.querySelectorAll('section[aria-labelledby="service-title"] td')).filter(
        (cell) => {
          const own = cell.getBoundingClientRect();
          return own.left < box.left || own.right > box.right + 0.5;
        },
      );
      return outside.length === 0 ? 'fits' : `${outside.length} cells outside`;
    });

  it('shows the whole service record on a phone, each window as a card of labelled values', async () => {
    await brokeredCall();
    for (const viewport of Object.values(VIEWPORTS)) {
      const { context, page } = await newPage(viewport);
      await page.goto(agentUrl(fixture.translator.did));
      assert.equal(await serviceTableFits(page), 'fits', `${viewport.width} px`);
      await page
        .locator('section[aria-labelledby="service-title"]')
        .screenshot({ path: `${SCREENSHOTS}service-record-${viewport.width}.png` });
      if (viewport.width === VIEWPORTS.phone.width) {
        const firstCell = page
          .locator('section[aria-labelledby="service-title"] tbody tr')
          .first()
          .locator('td')
          .first();
        assert.equal(
          await firstCell.evaluate(
            (cell) =>
              (
                globalThis as unknown as {
                  getComputedStyle(element: unknown, pseudo: string): { content: string };
                }
              ).getComputedStyle(cell, '::before').content,
          ),
          '"Calls"',
        );
      }
      await context.close();
    }
  });

  it('keeps the Copy buttons off the code they copy on /join and the agent page, phone and desktop', async () => {
    for (const viewport of Object.values(VIEWPORTS)) {
      const { context, page } = await newPage(viewport);
      for (const url of [`${origin}/join`, agentUrl(fixture.translator.did)]) {
        await page.goto(url);
        const blocks = page.locator('.code');
        assert.ok((await blocks.count()) >= 3, url);
        for (const block of await blocks.all()) {
          const button = await block.locator('button.copy').boundingBox();
          const code = await block.locator('pre').boundingBox();
          assert.ok(button !== null && code !== null, `${url}: the copy button shows once the script ran`);
          const overlaps =
            button.x < code.x + code.width &&
            code.x < button.x + button.width &&
            button.y < code.y + code.height &&
            code.y < button.y + button.height;
          assert.ok(!overlaps, `${url} at ${viewport.width} px: the Copy button covers the code`);
        }
        await page.screenshot({
          path: `${SCREENSHOTS}copy-${new URL(url).pathname.split('/')[1]}-${viewport.width}.png`,
        });
      }
      await context.close();
    }
  });

  it('leads from the API reference at /docs back to the site', async () => {
    for (const viewport of Object.values(VIEWPORTS)) {
      const { context, page } = await newPage(viewport);
      await page.goto(`${origin}/docs`);
      const back = page.getByRole('link', { name: '← Back to the registry' });
      await back.waitFor();
      await page.locator('.topbar').screenshot({ path: `${SCREENSHOTS}docs-topbar-${viewport.width}.png` });
      await back.click();
      await page.waitForURL(`${origin}/`);
      assert.equal(await page.locator('h1').textContent(), 'Find an agent');
      await context.close();
    }
  });

  it('logged no console error, page error or dialog on any page', () => {
    assert.deepEqual(problems, []);
  });
});
