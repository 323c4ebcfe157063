// Prints the OpenAPI document the registry serves at /openapi.json (for the SDK's generated types).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/kernel/config.js';
import { createContext } from '../src/context.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-openapi-'));
try {
  const config = loadConfig({ DATABASE_URL: `sqlite:${path.join(dir, 'registry.db')}`, LOG_LEVEL: 'silent' });
  const ctx = await createContext(config);
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  const response = await app.inject({ method: 'GET', url: '/openapi.json' });
  process.stdout.write(`${JSON.stringify(response.json(), null, 2)}\n`);
  await app.close();
  await ctx.close();
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
