#!/usr/bin/env node
// Runs the built CLI. `npm ci` at the repository root builds it (each package's `prepare` script).
try {
  await import('../dist/main.js');
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('/dist/main.js')) {
    console.error(
      'agent-registry is not built yet: run `npm ci` (or `npm run build:libs`) at the repository root.',
    );
    process.exit(2);
  }
  throw error;
}
