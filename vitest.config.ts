import { defineConfig } from 'vitest/config';

// One vitest run covers every workspace. Integration tests start real `svc`
// processes and real clients, so they get generous timeouts; the pool uses
// forks because tests spawn child processes and bind ports.
export default defineConfig({
  test: {
    include: ['topology/src/**/*.test.ts', 'node/src/**/*.test.ts', 'node/console-ui/**/*.test.ts', 'node/test/**/*.test.ts', 'operator/src/**/*.test.ts', 'operator/test/**/*.test.ts', 'e2e/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    pool: 'forks',
    // the web console's pages, built from node/console-ui so tests never see a stale build
    globalSetup: ['node/test/helpers/build-console-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
