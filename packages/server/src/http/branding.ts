import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

export const PRODUCT_NAME = 'Agent Registry';

/** The product mark: a key inside a node graph (agents that prove a key and find each other). */
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="220" height="40" viewBox="0 0 220 40" role="img" aria-label="${PRODUCT_NAME}">
<g fill="none" stroke="#7dd3fc" stroke-width="2.5"><circle cx="20" cy="20" r="16"/><circle cx="20" cy="15" r="5"/><path d="M20 20v12M20 27h5"/></g>
<text x="44" y="27" font-family="system-ui,-apple-system,Segoe UI,sans-serif" font-size="20" font-weight="600" fill="#ffffff">${PRODUCT_NAME}</text>
</svg>`;

const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><g fill="none" stroke="#0369a1" stroke-width="3"><circle cx="20" cy="20" r="16"/><circle cx="20" cy="15" r="5"/><path d="M20 20v12M20 27h5"/></g></svg>`;

/** Swagger UI at /docs shows the registry's name and mark, not the framework's. */
export const swaggerUiBranding: Pick<FastifySwaggerUiOptions, 'logo' | 'theme'> = {
  logo: { type: 'image/svg+xml', content: Buffer.from(LOGO_SVG), href: '/docs', target: '_self' },
  theme: {
    title: `${PRODUCT_NAME} API`,
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
