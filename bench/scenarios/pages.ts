import { SEARCH_QUERIES } from '../corpus.js';
import { cycling, type Row } from '../measure.js';
import { atConnections, measureRegistry, type ScenarioContext } from './context.js';

/**
 * Web pages: the same services as the API plus HTML rendering. Home (totals + top agents), a full-text
 * search page, an agent page (profile, reputation, 10 reviews, DID document), the statistics page.
 * Each page is measured at the run's connections and then at one (its p50 budget, without queueing),
 * after the API calls it is built on at one connection: the difference is the page's own cost.
 */
export async function pageScenarios(context: ScenarioContext): Promise<Row[]> {
  const { options, sampleDids } = context;
  const pages: { name: string; label: string; paths: string[]; api?: { label: string; paths: string[] } }[] =
    [
      {
        name: 'page-home',
        label: 'page / (totals, top 20 agents)',
        paths: ['/'],
        api: { label: '  its API call', paths: ['/api/agents/search?limit=20'] },
      },
      {
        name: 'page-search',
        label: 'page /?q= (full text, 20 a page)',
        paths: SEARCH_QUERIES.map((q) => `/?q=${encodeURIComponent(q)}`),
        api: {
          label: '  its API call',
          paths: SEARCH_QUERIES.map((q) => `/api/agents/search?q=${encodeURIComponent(q)}&limit=20`),
        },
      },
      {
        name: 'page-agent',
        label: 'page /agents/{did}',
        paths: sampleDids.map((did) => `/agents/${encodeURIComponent(did)}`),
        api: {
          label: '  its API calls (profile, reputation, reviews: 3 requests)',
          paths: sampleDids.flatMap((did) => [
            `/api/agents/${encodeURIComponent(did)}`,
            `/api/agents/${encodeURIComponent(did)}/reputation`,
            `/api/agents/${encodeURIComponent(did)}/reviews?limit=10`,
          ]),
        },
      },
      { name: 'page-stats', label: 'page /stats', paths: ['/stats'] },
    ];
  const rows: Row[] = [];
  for (const page of pages) {
    if (!context.wanted('pages') && !context.wanted(page.name)) continue;
    if (page.api !== undefined) {
      rows.push(
        await measureRegistry(context, {
          ...atConnections(`${page.name}-api`, page.api.label, 1),
          load: { requests: cycling(page.api.paths) },
        }),
      );
    }
    const requests = cycling(page.paths, { accept: 'text/html' });
    rows.push(
      await measureRegistry(context, {
        name: page.name,
        label: page.label,
        connections: options.connections,
        load: { requests },
      }),
    );
    // Warm already: the run at many connections just before it served the same pages.
    rows.push(
      await measureRegistry(context, {
        ...atConnections(page.name, page.label, 1),
        load: { requests },
        warmup: false,
      }),
    );
  }
  return rows;
}
