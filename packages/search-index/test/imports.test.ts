import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { test } from 'node:test';

// The index is fed by the server and must stay usable without it: no server code, no database layer.
const ALLOWED_PACKAGES = new Set(['roaring', 'stemmer']);

test('the package imports only its own modules, roaring and stemmer', () => {
  const source = new URL('../src/', import.meta.url);
  const files = readdirSync(source).filter((name) => name.endsWith('.ts'));
  assert.ok(files.includes('search-index.ts'));
  const outside: string[] = [];
  for (const file of files) {
    const text = readFileSync(new URL(file, source), 'utf8');
    // `from '…'`, a bare `import '…'` and `import('…')`.
    for (const match of text.matchAll(/\b(?:from|import)\s*\(?\s*'([^']+)'/g)) {
      const specifier = match[1] as string;
      if (specifier.startsWith('./')) continue;
      if (!ALLOWED_PACKAGES.has(specifier)) outside.push(`${file}: ${specifier}`);
    }
  }
  assert.deepEqual(outside, []);
});
