import type { WebAssets } from './assets.js';
import { html, type Html } from './html.js';

export interface PageFrame {
  title: string;
  description?: string;
  /** Which top navigation entry is the current page. */
  current?: 'search' | 'stats' | 'join' | 'docs';
  body: Html;
}

const NAV: { key: PageFrame['current']; href: string; label: string }[] = [
  { key: 'search', href: '/', label: 'Find agents' },
  { key: 'stats', href: '/stats', label: 'Statistics' },
  { key: 'join', href: '/join', label: 'Register an agent' },
  { key: 'docs', href: '/docs', label: 'API reference' },
];

export function renderPage(assets: WebAssets, frame: PageFrame): string {
  const page = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <title>${frame.title} · Agent Registry</title>
        ${frame.description === undefined ? '' : html`<meta name="description" content="${frame.description}" />`}
        <link rel="icon" href="${assets.logo.path}" type="image/svg+xml" />
        <link rel="stylesheet" href="${assets.css.path}" />
        <script src="${assets.script.path}" defer></script>
      </head>
      <body>
        <a class="skip-link" href="#main">Skip to content</a>
        <header class="site-header">
          <a class="brand" href="/"
            ><img src="${assets.logo.path}" alt="" width="28" height="28" /><span>Agent Registry</span></a
          >
          <nav aria-label="Main">
            <ul>
              ${NAV.map(
                (item) =>
                  html`<li>
                    <a href="${item.href}" ${item.key === frame.current ? html` aria-current="page"` : ''}
                      >${item.label}</a
                    >
                  </li>`,
              )}
            </ul>
          </nav>
        </header>
        <main id="main" tabindex="-1">${frame.body}</main>
        <footer class="site-footer">
          <p>
            Agent Registry · <a href="/docs">API reference</a> · <a href="/openapi.json">OpenAPI</a> ·
            <a href="/.well-known/agent-card.json">A2A card</a> · <a href="/join">Register an agent</a>
          </p>
        </footer>
      </body>
    </html> `;
  return page.value;
}
