import { insertTask, registerNamed, registerReviewers, submitReview } from './discovery-helpers.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import { type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';

/** Text that would run if any page put it into HTML unescaped, or followed a javascript: URL. */
export const XSS_NAME = `<script>window.__xss = 'name'</script><img src=x onerror="window.__xss='img'">`;
export const XSS_DESCRIPTION = `</p><script>alert('description')</script><a href="javascript:alert(1)">click</a>`;
export const XSS_URL = `javascript:window.__xss='link'`;
export const XSS_COMMENT = `<img src=x onerror="alert('comment')"> '; rm -rf ~; echo '`;
/** A capability whose input schema would break out of a shell quote if spliced into a snippet. */
export const XSS_PROPERTY = `it's'; touch /tmp/pwned; echo '</script>`;

export interface WebFixture {
  translator: Registered;
  deactivated: Registered;
  xss: Registered;
  /** How many agents are active (search results without filters). */
  activeCount: number;
  reviewCount: number;
}

/**
 * A registry with enough agents to page (page size 20), a translator with a schema, a queue, twelve
 * reviews (one verified) so its reviews page too, a deactivated agent and a hostile profile.
 */
export async function seedWebFixture(registry: TestRegistry, avatarUrl: string): Promise<WebFixture> {
  const translator = await registerNamed(registry, 'Polyglot Translator', {
    description: 'Translates text between English, French and German.',
    avatar: avatarUrl,
    website: 'https://example.org/polyglot',
    tags: ['fr', 'de', 'language'],
    capabilities: [
      {
        type: 'translation',
        description: 'Translate a text into a target language',
        tags: ['fr', 'de'],
        input_schema: {
          type: 'object',
          properties: { text: { type: 'string' }, target: { type: 'string', enum: ['fr', 'de'] } },
          required: ['text', 'target'],
        },
        output_schema: { type: 'object', properties: { text: { type: 'string' } } },
      },
    ],
  });
  const configured = await registry.app.inject({
    method: 'PUT',
    url: agentPath(translator.did, '/invocation'),
    headers: bearer(translator.token),
    payload: { enabled: true, delivery_mode: 'queue' },
  });
  if (configured.statusCode !== 200) throw new Error(configured.body);

  const fillers: Registered[] = [];
  for (let index = 0; index < 22; index += 1) {
    // Distinct creation times, so "newest" and "oldest" have one right order.
    registry.clock.advance(1000);
    fillers.push(
      await registerNamed(registry, `Helper ${String(index).padStart(2, '0')}`, {
        capabilities: [{ type: index % 2 === 0 ? 'summarization' : 'general' }],
        tags: [index % 2 === 0 ? 'text' : 'misc'],
      }),
    );
  }

  const reviewers = await registerReviewers(registry, 12);
  for (const [index, reviewer] of reviewers.entries()) {
    const verified = index === 0 ? await insertTask(registry, reviewer.did, translator.did) : undefined;
    const response = await submitReview(registry, reviewer.token, {
      target_did: translator.did,
      rating: 10 - (index % 5),
      comment: index === 11 ? XSS_COMMENT : `Review number ${index + 1}: accurate and fast.`,
      ...(verified === undefined ? {} : { call_record_id: verified }),
    });
    if (response.statusCode !== 201) throw new Error(response.body);
  }

  const deactivated = await registerNamed(registry, 'Retired Summarizer', {
    description: 'No longer in service.',
    capabilities: [{ type: 'summarization' }],
  });
  const gone = await registry.app.inject({
    method: 'DELETE',
    url: agentPath(deactivated.did),
    headers: bearer(deactivated.token),
  });
  if (gone.statusCode !== 200) throw new Error(gone.body);

  const xss = await registerNamed(registry, XSS_NAME, {
    description: XSS_DESCRIPTION,
    tags: ['<b>bold</b>'],
    capabilities: [
      {
        type: 'exploit',
        description: '<script>alert("capability")</script>',
        input_schema: { type: 'object', properties: { [XSS_PROPERTY]: { type: 'string' } } },
      },
    ],
  });
  const xssQueue = await registry.app.inject({
    method: 'PUT',
    url: agentPath(xss.did, '/invocation'),
    headers: bearer(xss.token),
    payload: { enabled: true, delivery_mode: 'queue' },
  });
  if (xssQueue.statusCode !== 200) throw new Error(xssQueue.body);
  // Registration refuses non-http(s) URLs; write them straight into the row, as older data or another
  // writer could, to prove the page itself never renders them as links or images.
  await registry.ctx.database.db
    .updateTable('agents')
    .set({ avatar: XSS_URL, website: XSS_URL })
    .where('did', '=', xss.did)
    .execute();

  return {
    translator,
    deactivated,
    xss,
    activeCount: 1 + fillers.length + reviewers.length + 1,
    reviewCount: reviewers.length,
  };
}
