import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

export const PRODUCT_NAME = 'Agent Registry';

/** The product mark: a key inside a node graph (agents that prove a key and find each other). */
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="220" height="40" viewBox="0 0 220 40" role="img" aria-label="${PRODUCT_NAME}">
<g fill="none" stroke="#7dd3fc" stroke-width="2.5"><circle cx="20" cy="20" r="16"/><circle cx="20" cy="15" r="5"/><path d="M20 20v12M20 27h5"/></g>
<text x="44" y="27" font-family="system-ui,-apple-system,Segoe UI,sans-serif" font-size="20" font-weight="600" fill="#ffffff">${PRODUCT_NAME}</text>
</svg>`;

const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><g fill="none" stroke="#0369a1" stroke-width="3"><circle cx="20" cy="20" r="16"/><circle cx="20" cy="15" r="5"/><path d="M20 20v12M20 27h5"/></g></svg>`;

/**
 * A way back from the API reference to the registry's pages: Swagger UI draws its top bar itself, so
 * a small script of ours (served next to it, same origin) links the logo to / and adds a text link.
 */
const BACK_TO_SITE_JS = `(function () {
  function addBackLink() {
    var bar = document.querySelector('#swagger-ui .topbar-wrapper');
    if (!bar) return false;
    var logo = bar.querySelector('a.link');
    if (logo) logo.setAttribute('href', '/');
    if (!bar.querySelector('.back-to-site')) {
      var back = document.createElement('a');
      back.className = 'back-to-site';
      back.href = '/';
      back.textContent = '\u2190 Back to the registry';
      bar.insertBefore(back, logo ? logo.nextSibling : bar.firstChild);
    }
    return true;
  }
  if (addBackLink()) return;
  var watcher = new MutationObserver(function () {
    if (addBackLink()) watcher.disconnect();
  });
  watcher.observe(document.body, { childList: true, subtree: true });
})();
`;

const BACK_TO_SITE_CSS = `.swagger-ui .topbar .back-to-site {
  color: #ffffff;
  margin: 0 1.5rem 0 0.5rem;
  white-space: nowrap;
  font-size: 15px;
  font-weight: 600;
  font-family: system-ui, -apple-system, 'Segoe UI', sans-serif;
}
.swagger-ui .topbar .back-to-site:focus-visible {
  outline: 3px solid #f59e0b;
}
`;

/** Swagger UI at /docs shows the registry's name and mark, not the framework's. */
export const swaggerUiBranding: Pick<FastifySwaggerUiOptions, 'logo' | 'theme'> = {
  logo: { type: 'image/svg+xml', content: Buffer.from(LOGO_SVG), href: '/', target: '_self' },
  theme: {
    title: `${PRODUCT_NAME} API`,
    js: [{ filename: 'back-to-site.js', content: BACK_TO_SITE_JS }],
    css: [{ filename: 'back-to-site.css', content: BACK_TO_SITE_CSS }],
    favicon: [
      {
        filename: 'favicon.svg',
        rel: 'icon',
        sizes: 'any',
        type: 'image/svg+xml',
        content: Buffer.from(FAVICON_SVG),
      },
    ],
  },
};
