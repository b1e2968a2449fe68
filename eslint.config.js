// Lint: ESLint with typescript-eslint's recommended rules (syntax-level, no
// type information, so it stays fast). Biome was tried first; its per-platform
// binary packages are not all published to the registry these machines use,
// which breaks `npm ci` on a clean clone.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/build/**', 'node/native/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'module',
      globals: {
        process: 'readonly', Buffer: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly',
        setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', clearImmediate: 'readonly',
        URL: 'readonly', URLSearchParams: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', fetch: 'readonly',
        AbortController: 'readonly', AbortSignal: 'readonly', queueMicrotask: 'readonly', structuredClone: 'readonly',
        Response: 'readonly', Request: 'readonly', Headers: 'readonly', performance: 'readonly', crypto: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-control-regex': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
);
