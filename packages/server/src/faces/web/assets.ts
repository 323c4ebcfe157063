import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** packages/server/assets, from src/faces/web (tsx) and dist/faces/web (built) alike. */
const ASSETS_DIR = fileURLToPath(new URL('../../../assets/', import.meta.url));

export interface Asset {
  /** Content-addressed path, so it can be cached for a year and never goes stale. */
  path: string;
  contentType: string;
  body: Buffer;
}

function load(file: string, contentType: string): Asset {
  const body = readFileSync(ASSETS_DIR + file);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const dot = file.lastIndexOf('.');
  return { path: `/assets/${file.slice(0, dot)}.${hash}${file.slice(dot)}`, contentType, body };
}

export interface WebAssets {
  css: Asset;
  script: Asset;
  logo: Asset;
}

export function loadWebAssets(): WebAssets {
  return {
    css: load('site.css', 'text/css; charset=utf-8'),
    script: load('app.js', 'text/javascript; charset=utf-8'),
    logo: load('logo.svg', 'image/svg+xml'),
  };
}
