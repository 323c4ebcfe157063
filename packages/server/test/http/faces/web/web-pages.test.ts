import { swaggerUiBranding } from '../../../../src/faces/rest/branding.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Html, html, safeHttpUrl, trusted } from '../../../../src/faces/web/html.js';
import { renderMarkdown } from '../../../../src/faces/web/markdown.js';
import { PAGE_CSP } from '../../../../src/faces/web/routes.js';
import { callSnippets, exampleFromSchema, shellQuote } from '../../../../src/faces/web/snippets.js';
import { registerNamed, submitReview } from '../../../support/discovery-helpers.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import {
  XSS_COMMENT,
  XSS_NAME,
  XSS_PROPERTY,
  XSS_URL,
  seedWebFixture,
  type WebFixture,
} from '../../../support/web-fixtures.js';

function assertContains(haystack: string, needle: string): void {
  assert.ok(haystack.includes(needle), `expected the page to contain ${needle}`);
}

function assertLacks(haystack: string, needle: string): void {
  assert.ok(!haystack.includes(needle), `expected the page not to contain ${needle}`);
}

const pageOf = (did: string) => `/agents/${encodeURIComponent(did)}`;

describe('html tag', () => {
  it('escapes every interpolated string, attribute quotes included', () => {
    const name = `<script>alert("x")</script>' onload='y' \``;
    const out = html`<p title="${name}">${name}</p>`.value;
    assert.equal(
      out,
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;y&#39; &#96;">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;y&#39; &#96;</p>',
    );
  });

  it('nests Html without escaping it twice, joins arrays, and drops null, undefined and false', () => {
    const items = ['a&b', '<c>'].map((item) => html`<li>${item}</li>`);
    assert.equal(
      html`<ul>${items}${null}${undefined}${false}${0}</ul>`.value,
      '<ul><li>a&amp;b</li><li>&lt;c&gt;</li>0</ul>',
    );
    assert.ok(trusted('<b>ours</b>') instanceof Html, 'trusted() gives Html');
  });

  it('accepts only http and https URLs as links', () => {
    assert.equal(safeHttpUrl('https://example.org/a?b=1'), 'https://example.org/a?b=1');
    assert.equal(safeHttpUrl('http://example.org'), 'http://example.org/');
    for (const bad of [
      'javascript:alert(1)',
      ' JavaScript:alert(1)',
      'data:text/html,x',
      'vbscript:x',
      '//x',
      'x',
      '',
    ]) {
      assert.equal(safeHttpUrl(bad), undefined, bad);
    }
  });
});

describe('markdown for repository documents', () => {
  it('renders headings, lists, code and links, and shows raw HTML and javascript: links as text', () => {
    const out = renderMarkdown(
      [
        '# Signing',
        '',
        'Sign **exactly** these bytes: `{"a":1}` (see [the spec](https://example.org/spec)).',
        '',
        '- one',
        '- two <script>alert(1)</script>',
        '',
        '```json',
        '{"purpose": "registration"}',
        '```',
        '',
        '[bad](javascript:alert(1)) <img src=x onerror=alert(1)>',
        '',
        '| Value | Example |',
        '| --- | --- |',
        '| key | `<b>` |',
      ].join('\n'),
    ).value;
    assert.match(out, /<h1>Signing<\/h1>/);
    assert.match(out, /<strong>exactly<\/strong>/);
    assert.match(out, /<code>\{&quot;a&quot;:1\}<\/code>/);
    assert.match(out, /<a href="https:\/\/example.org\/spec">the spec<\/a>/);
    assert.match(out, /<li>two &lt;script&gt;alert\(1\)&lt;\/script&gt;<\/li>/);
    assert.match(
      out,
      /<pre tabindex="0"><code>\{&quot;purpose&quot;: &quot;registration&quot;\}<\/code><\/pre>/,
    );
    assert.match(out, /<th scope="col">Value<\/th>/);
    assert.match(out, /<td><code>&lt;b&gt;<\/code><\/td>/);
    assert.doesNotMatch(out, /href="javascript:/);
    assert.doesNotMatch(out, /<img/);
  });
});

describe('call snippets', () => {
  it('quotes hostile values so a shell sees exactly one word each', () => {
    for (const word of [XSS_PROPERTY, `'`, `''`, `$(touch /tmp/x)`, 'a b\nc', `\\'"`]) {
      const echoed = execFileSync('sh', ['-c', `printf '%s' ${shellQuote(word)}`], { encoding: 'utf8' });
      assert.equal(echoed, word);
    }
  });

  it('fills the CLI and curl snippets with the agent, the capability and a sample input', () => {
    const snippets = callSnippets({
      registry: 'http://localhost:8080',
      did: 'did:web:localhost%3A8080:agent:0123456789abcdef0123456789abcdef',
      capability: 'translation',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string' }, n: { type: 'integer', minimum: 1 } },
      },
    });
    assert.match(
      snippets.cli,
      /^agent-registry invoke 'did:web:localhost%3A8080:agent:0123456789abcdef0123456789abcdef' 'translation'/,
    );
    assert.match(snippets.cli, /--input '\{"text":"\.\.\.","n":1\}'/);
    assert.match(snippets.sdk, /new RegistryClient\(\{ registry: "http:\/\/localhost:8080", key \}\)/);
    assert.match(snippets.sdk, /client\.invoke\(/);
    assert.match(snippets.curl, /'http:\/\/localhost:8080\/api\/invoke'/);
    assert.match(
      snippets.curl,
      /AGENT_REGISTRY_TOKEN=\$\(agent-registry token --registry 'http:\/\/localhost:8080'\)/,
    );
    assert.match(snippets.sdk, /loadKey\('\.\/my-agent-key\.json'\)/);
    // The curl body is the exact invoke request.
    const body = /-d '(.*)'$/s.exec(snippets.curl)?.[1];
    assert.deepEqual(JSON.parse(body ?? ''), {
      target_did: 'did:web:localhost%3A8080:agent:0123456789abcdef0123456789abcdef',
      capability: 'translation',
      input: { text: '...', n: 1 },
    });
  });

  it('makes a sample input from enums, required members, arrays and nesting, and stops at depth', () => {
    assert.deepEqual(
      exampleFromSchema({
        type: 'object',
        required: ['lang', 'items'],
        properties: {
          lang: { enum: ['fr', 'de'] },
          items: { type: 'array', items: { type: 'object', properties: { ok: { type: 'boolean' } } } },
          ignored: { type: 'string' },
        },
      }),
      { lang: 'fr', items: [{ ok: true }] },
    );
    assert.deepEqual(exampleFromSchema(null), {});
  });
});

describe('web pages over HTTP', () => {
  let registry: TestRegistry;
  let fixture: WebFixture;
  const get = (url: string, accept = 'text/html') =>
    registry.app.inject({ method: 'GET', url, headers: { accept } });

  before(async () => {
    registry = await startRegistry({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    fixture = await seedWebFixture(registry, 'https://example.org/avatar.png');
  });
  after(async () => registry.close());

  it('serves every page as HTML with a CSP that forbids inline script and style', async () => {
    for (const url of ['/', '/?q=translate', '/stats', '/join', pageOf(fixture.translator.did)]) {
      const response = await get(url);
      assert.equal(response.statusCode, 200, url);
      assert.match(String(response.headers['content-type']), /^text\/html; charset=utf-8/);
      assert.equal(response.headers['content-security-policy'], PAGE_CSP);
      assert.match(PAGE_CSP, /script-src 'self'(;|$)/);
      assert.match(PAGE_CSP, /style-src 'self'(;|$)/);
      assert.doesNotMatch(response.body, /<script(?![^>]*\bsrc="\/assets\/app\.[0-9a-f]{12}\.js")/, url);
      assert.doesNotMatch(response.body, /\sstyle=|<style/, url);
      assert.match(response.body, /<main id="main"/);
      assert.match(response.body, /href="\/docs"/);
    }
  });

  it('titles an unsearched list by what it holds and its order, and folds the filters on a phone even in use', async () => {
    const title = (body: string) => /<h2 id="results-title">([^<]*)<\/h2>/.exec(body)?.[1]?.trim();
    assert.equal(title((await get('/')).body), 'Agents by reputation');
    assert.equal(title((await get('/?available=true')).body), 'Agents online now by reputation');
    assert.equal(title((await get('/?sort=created_at')).body), 'Agents, newest first');
    assert.equal(title((await get('/?sort=availability')).body), 'Agents, online first');
    for (const url of ['/', '/?available=true', '/?capability=translation&sort=created_at']) {
      const body = (await get(url)).body;
      assert.match(body, /<details class="filter-box" open data-collapse-narrow>/, url);
    }
    assert.match((await get('/?available=true&sort=created_at')).body, /Filters and sort \(2 in use\)/);
  });

  it('serves the stylesheet and script it links, cacheable for a year', async () => {
    const page = (await get('/')).body;
    for (const path of [/href="(\/assets\/site\.[0-9a-f]+\.css)"/, /src="(\/assets\/app\.[0-9a-f]+\.js)"/]) {
      const url = path.exec(page)?.[1];
      assert.ok(url, `the page links ${String(path)}`);
      const asset = await get(url, '*/*');
      assert.equal(asset.statusCode, 200);
      assert.match(String(asset.headers['cache-control']), /immutable/);
    }
  });

  it('renders search results and the totals from the same services as the API', async () => {
    const api = (await get('/api/agents/search?q=translates', 'application/json')).json<{ total: number }>();
    const page = (await get('/?q=translates')).body;
    assert.match(page, new RegExp(`${api.total} agents? match`));
    assert.match(page, /Polyglot Translator/);
    const stats = (await get('/api/stats', 'application/json')).json<{ agents_count: number }>();
    assert.match((await get('/')).body, new RegExp(`<strong>${stats.agents_count}</strong> agents`));
  });

  it('explains a bad search instead of failing', async () => {
    const response = await get('/?q=%21%21%21');
    assert.equal(response.statusCode, 400);
    assert.match(response.body, /role="alert">q must contain at least one letter or digit/);
    assert.match((await get('/?min_reputation=500')).body, /role="alert">min_reputation must be &lt;= 100/);
  });

  it('answers an unknown DID and an unknown page with an HTML 404, and /api with the JSON error', async () => {
    const unknown = await get(pageOf('did:web:localhost%3A8080:agent:00000000000000000000000000000000'));
    assert.equal(unknown.statusCode, 404);
    assert.match(unknown.body, /<h1 id="page-title">Not found<\/h1>/);
    assert.equal((await get(pageOf('not-a-did'))).statusCode, 404);
    const page = await get('/no/such/page');
    assert.equal(page.statusCode, 404);
    assert.match(String(page.headers['content-type']), /text\/html/);
    const api = await get('/api/no/such/route');
    assert.equal(api.statusCode, 404);
    assert.equal(api.json<{ code: string }>().code, 'ROUTE_NOT_FOUND');
    const client = await get('/no/such/page', 'application/json');
    assert.equal(client.json<{ code: string }>().code, 'ROUTE_NOT_FOUND');
  });

  it('keeps the pages out of the OpenAPI document', async () => {
    const paths = Object.keys(
      (await get('/openapi.json', 'application/json')).json<{ paths: object }>().paths,
    );
    for (const page of ['/', '/agents/{did}', '/stats', '/join']) assert.ok(!paths.includes(page), page);
    assert.ok(paths.includes('/api/agents/search'), 'the API is still documented');
  });

  it('renders a hostile profile as inert text: no script, no javascript: link or image', async () => {
    const body = (await get(pageOf(fixture.xss.did))).body;
    assert.equal(body.match(/<script/g)?.length, 1);
    assert.doesNotMatch(body, /(href|src)="\s*javascript:/i);
    assertContains(body, '&lt;script&gt;window.__xss = &#39;name&#39;&lt;/script&gt;');
    assertLacks(body, XSS_NAME);
    assertContains(body, `Website (not a web link): <span>${XSS_URL.replace(/'/g, '&#39;')}</span>`);
    assert.doesNotMatch(body, /<img[^>]+class="avatar"/);
    const reviewed = (await get(pageOf(fixture.translator.did))).body;
    assertLacks(reviewed, XSS_COMMENT);
    assertContains(reviewed, '&lt;img src=x onerror=&quot;alert(&#39;comment&#39;)&quot;&gt;');
  });

  it("never shows an agent's webhook URL or secret", async () => {
    const agent = await registerNamed(registry, 'Hooked');
    const url = 'http://127.0.0.1:9/secret-hook-path';
    const secret = 'whsec_' + Buffer.from('a very secret webhook key!!').toString('base64');
    const configured = await registry.app.inject({
      method: 'PUT',
      url: agentPath(agent.did, '/invocation'),
      headers: bearer(agent.token),
      payload: { enabled: true, delivery_mode: 'webhook', webhook_url: url, webhook_secret: secret },
    });
    assert.equal(configured.statusCode, 200, configured.body);
    const body = (await get(pageOf(agent.did))).body;
    assert.match(body, /signed webhook/);
    assertLacks(body, 'secret-hook-path');
    assertLacks(body, secret);
  });

  it('says where the agent is in the transparency log, and when its record does not match', async () => {
    const agent = await registerNamed(registry, 'Logged Page');
    const proof = (await get(agentPath(agent.did, '/log-proof'))).json<{ leaf_index: number }>();
    const body = (await get(pageOf(agent.did))).body;
    // Who verified it: the registry, as it made the page (a reader checks it with the proof).
    assert.match(
      body,
      new RegExp(
        `logged at position ${proof.leaf_index},\\s+checked against the log by this registry as it made this page`,
      ),
    );
    assertContains(body, `href="/api/agents/${encodeURIComponent(agent.did)}/log-proof"`);

    const db = registry.ctx.database.db;
    const seq = (
      await db
        .selectFrom('agents')
        .select('change_seq')
        .where('did', '=', agent.did)
        .executeTakeFirstOrThrow()
    ).change_seq;
    const row = await db
      .selectFrom('log_records')
      .selectAll()
      .where('seq', '=', seq)
      .executeTakeFirstOrThrow();
    await db
      .updateTable('log_records')
      .set({ record: row.record.replace('Logged Page', 'Forged Page') })
      .where('seq', '=', seq)
      .execute();
    try {
      assert.match((await get(pageOf(agent.did))).body, /does not match the logged record/);
    } finally {
      await db.updateTable('log_records').set({ record: row.record }).where('seq', '=', seq).execute();
    }
  });

  it('links invocation endpoints only for an invocable agent, and the A2A card always', async () => {
    const translator = (await get(pageOf(fixture.translator.did))).body;
    const did = encodeURIComponent(fixture.translator.did);
    assertContains(translator, `href="/a2a/${did}/.well-known/agent-card.json"`);
    assertContains(translator, `href="/mcp/agents/${did}"`);
    assertContains(translator, 'href="/api/invoke"');
    assert.match(translator, /agent-registry invoke/);
    const retired = (await get(pageOf(fixture.deactivated.did))).body;
    const retiredDid = encodeURIComponent(fixture.deactivated.did);
    assertContains(retired, `href="/a2a/${retiredDid}/.well-known/agent-card.json"`);
    assertLacks(retired, '/mcp/agents/');
    assertLacks(retired, 'href="/api/invoke"');
    assert.match(retired, /<strong>Deactivated<\/strong>/);
  });

  it('shows the service record the registry measured from brokered calls', async () => {
    const page = async () => (await get(pageOf(fixture.translator.did))).body;
    const before = await page();
    assertContains(before, '<h2 id="service-title">Service record</h2>');
    const callsBefore = Number(/(\d+) brokered\s+call/.exec(before)?.[1] ?? 0);
    const invoking = registry.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(fixture.xss.token),
      payload: {
        target_did: fixture.translator.did,
        capability: 'translation',
        input: { text: 'hi', target: 'fr' },
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
      (await worker('POST', `/api/agent/tasks/${taskId}/result`, { output: { text: 'salut' } })).statusCode,
      200,
    );
    assert.equal((await invoking).statusCode, 200);
    const after = await page();
    assert.match(after, new RegExp(`${callsBefore + 1} brokered\\s+call`));
    assert.match(after, /<th scope="row">Last 7 days<\/th>\s*<td[^>]*>\d+<\/td>\s*<td[^>]*>100\.0 %<\/td>/);
  });

  it('shows totals, activity and the published rules on /stats', async () => {
    const body = (await get('/stats')).body;
    assert.match(body, /Active agents<\/dt>\s*<dd>\d+<\/dd>/);
    assert.match(body, /Invocations: 1 in 30 days/);
    assert.match(body, new RegExp(`Reviews: ${fixture.reviewCount} in 30 days`));
    assert.match(body, /at most 10 reviews\s+per\s+hour/);
  });

  it('serves the signing document at /docs/signing when the repository has it, and /join links it', async () => {
    const join = (await get('/join')).body;
    const signing = await get('/docs/signing');
    if (existsSync(new URL('../../../../../../docs/signing.md', import.meta.url))) {
      assert.equal(signing.statusCode, 200);
      assert.equal(signing.headers['content-security-policy'], PAGE_CSP);
      assertContains(join, 'href="/docs/signing"');
    } else {
      assert.equal(signing.statusCode, 404);
      assertLacks(join, 'href="/docs/signing"');
    }
    assert.match(join, /npx agent-registry register --registry http:\/\/localhost:8080/);
    // The SDK snippet keeps its key in a file of its own: the CLI's key.json is another agent's identity.
    assert.match(join, /saveKey\(&#39;\.\/my-agent-key\.json&#39;, key\)/);
    assert.doesNotMatch(join, /saveKey\([^)]*\.config\/agent-registry\/key\.json/);
  });

  it('names each reviewer, linked to its page, from one lookup for the whole page of reviews', async () => {
    const labels = registry.ctx.agentLabels;
    const original = labels.labels.bind(labels);
    const calls: number[] = [];
    labels.labels = async (dids) => {
      calls.push(dids.length);
      return original(dids);
    };
    let body: string;
    try {
      body = (await get(pageOf(fixture.translator.did))).body;
    } finally {
      labels.labels = original;
    }
    assert.deepEqual(calls, [10], 'one lookup for the ten reviewers of the page');
    const reviewers = [
      ...body.matchAll(/<p class="reviewer">\s*by <a href="([^"]+)" title="([^"]+)">([^<]+)<\/a>/g),
    ];
    assert.equal(reviewers.length, 10);
    for (const [, href, did, name] of reviewers) {
      assert.equal(href, pageOf(did as string));
      assert.match(name as string, /^Reviewer \d+$/);
    }
    assertLacks(body, '<p class="reviewer">\n                      by <a');
  });

  it("escapes a hostile reviewer's name where it names the reviewer", async () => {
    const target = await registerNamed(registry, 'Reviewed By Hostile');
    const response = await submitReview(registry, fixture.xss.token, { target_did: target.did, rating: 7 });
    assert.equal(response.statusCode, 201, response.body);
    const body = (await get(pageOf(target.did))).body;
    assertLacks(body, XSS_NAME);
    assertContains(body, '&lt;script&gt;window.__xss = &#39;name&#39;&lt;/script&gt;');
    // A reviewer that has left since still shows by name, marked.
    const leaving = await registerNamed(registry, 'Former Reviewer');
    assert.equal(
      (await submitReview(registry, leaving.token, { target_did: target.did, rating: 6 })).statusCode,
      201,
    );
    const gone = await registry.app.inject({
      method: 'DELETE',
      url: agentPath(leaving.did),
      headers: bearer(leaving.token),
    });
    assert.equal(gone.statusCode, 200, gone.body);
    assert.match((await get(pageOf(target.did))).body, />Former Reviewer<\/a> \(deactivated\)/);
  });

  it('shows the average rating and the success rate on result cards, not the key type', async () => {
    const body = (await get('/?q=polyglot')).body;
    const card = /<li class="card">[\s\S]*?<\/article>/.exec(body)?.[0] ?? '';
    assert.match(card, /Polyglot Translator/);
    assert.match(card, /Rated <strong>8\.3<\/strong>\/10 by 12/);
    assert.match(card, /Success <strong>100 %<\/strong>/, 'the brokered call of the service-record test');
    assert.doesNotMatch(card, /ed25519|secp256k1/);
    const helper = /<li class="card">(?:(?!<\/article>)[\s\S])*Helper 21[\s\S]*?<\/article>/.exec(
      (await get('/?q=helper')).body,
    )?.[0];
    assert.match(helper ?? '', /No reviews/);
    assert.match(helper ?? '', /No calls in 30 days/);
  });

  it('says why the score reads what it does, next to it on the agent page', async () => {
    // Twelve reviews averaging 8.25 from reviewers registered the same day: they weigh nothing yet.
    const reviewed = (await get(pageOf(fixture.translator.did))).body;
    assert.match(
      reviewed,
      /<strong\s*>Why 50, when the average rating 8\.25\/10 alone would give\s+80\.6\?<\/strong\s*>/,
    );
    assert.match(reviewed, /accounts younger than 30 days weigh\s+nothing/);
    const unrated = (await get(pageOf(fixture.xss.did))).body;
    assert.match(unrated, /<strong>Why unrated\?<\/strong> No reviews yet/);
  });

  it('shows an agent without reviews as unrated, on its page and its card, not as 0/100', async () => {
    const page = (await get(pageOf(fixture.xss.did))).body;
    assert.match(page, /<span class="big">unrated<\/span> · no reviews yet/);
    assert.doesNotMatch(page, /<span class="big">0<\/span>\/100/);
    const list = (await get('/')).body;
    const cards = list.split('<article').slice(1);
    const card = cards.find((text) => text.includes(encodeURIComponent(fixture.xss.did)));
    assert.ok(card, 'the unreviewed agent is listed');
    assert.match(card, /Reputation <strong>unrated<\/strong>/);
    const rated = cards.find((text) => text.includes(encodeURIComponent(fixture.translator.did)));
    assert.match(rated ?? '', /Reputation <strong>50<\/strong>\/100/);
  });

  it('shows the reviewer weights of the reputation formula on /stats', async () => {
    const body = (await get('/stats')).body;
    assert.match(
      body,
      /a reviewer registered today weighs nothing; the weight grows evenly\s+to full at 30 days/,
    );
    assert.match(body, /called \(through the registry\)\s+3 or more other reviewed agents counts fully/);
    assert.match(body, /the review\s+keeps 0\.25 of its weight/);
    assert.match(body, /weigh at most\s+1 review together/);
    assert.match(body, /every reviewed agent reads 50 whatever its ratings/);
  });

  it('brands the API reference at /docs with the product', async () => {
    const docs = await get('/docs');
    assert.match(docs.body, /<title>Agent Registry API<\/title>/);
    const initializer = await get('/docs/static/swagger-initializer.js', '*/*');
    const ourLogo = (swaggerUiBranding.logo?.content as Buffer).toString('base64');
    assertContains(initializer.body, ourLogo);
    // A way back to the site: our script, served from this origin next to Swagger UI's.
    assert.match(docs.body, /<script src="[^"]*\/theme\/back-to-site\.js"/);
    const back = await get('/docs/static/theme/back-to-site.js', '*/*');
    assert.equal(back.statusCode, 200);
    assertContains(back.body, "back.href = '/'");
  });
});
