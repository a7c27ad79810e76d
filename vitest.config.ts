import { defineConfig } from 'vitest/config';

// Two projects: `unit` (tests beside the code, in-process) and `e2e` (the CLI as a child
// process, Chromium, benchmarks' own tests). `npx vitest run --project unit` runs the quick half.
export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores in CI: more workers only adds contention.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], exclude: ['src/**/*.browser.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts', 'src/**/*.browser.test.ts', 'bench/**/*.test.ts'] } },
    ],
  },
});
