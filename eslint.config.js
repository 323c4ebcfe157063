import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', '**/data/**'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    // The pages' progressive-enhancement script runs in browsers.
    files: ['packages/server/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: Object.fromEntries(
        [
          'AbortController',
          'DOMException',
          'DOMParser',
          'FormData',
          'HTMLButtonElement',
          'HTMLDetailsElement',
          'HTMLElement',
          'HTMLFormElement',
          'HTMLInputElement',
          'HTMLSelectElement',
          'URLSearchParams',
          'clearTimeout',
          'document',
          'fetch',
          'location',
          'navigator',
          'setTimeout',
          'window',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    // Plain Node.js programs for readers to run (examples/, test fixtures): Node's globals, console allowed.
    files: ['examples/**/*.mjs', '**/test/fixtures/**/*.mjs', 'packages/cli/bin/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
    rules: { 'no-console': 'off' },
  },
  {
    // Test code: the tests, the kit they share, and the bench.
    files: ['bench/**', '**/test/**', 'packages/testkit/**'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
