// Regenerates src/generated/openapi.ts from the OpenAPI document the registry serves.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderTypes } from './render-types.js';

const target = fileURLToPath(new URL('../src/generated/openapi.ts', import.meta.url));
const document = JSON.parse(
  execFileSync('npm', ['run', '--silent', 'openapi', '-w', '@agent-registry/server'], { encoding: 'utf8' }),
) as object;
writeFileSync(target, await renderTypes(document, target));
process.stdout.write(`wrote ${target}\n`);
