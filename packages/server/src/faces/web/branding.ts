import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const LOGO = fileURLToPath(new URL('../../../assets/logo.svg', import.meta.url));

/** Only the logo and title of the Swagger UI at /docs: the product's, not the framework's. */
export function swaggerUiBranding(): {
  logo: { type: string; content: Buffer; href: string; target: '_self' };
  theme: { title: string };
} {
  return {
    logo: { type: 'image/svg+xml', content: readFileSync(LOGO), href: '/', target: '_self' },
    theme: { title: 'Agent Registry · API reference' },
  };
}
