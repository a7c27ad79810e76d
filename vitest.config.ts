import { defineConfig } from 'vitest/config';
import { hangGuard } from './src/testing/hang-guard.js';

// Two projects: `unit` (tests beside the code, in-process) and `e2e` (the CLI as a child
// process, Chromium, benchmarks' own tests). `npx vitest run --project unit` runs the quick half.
export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Hang guards, not assertions: scaled with the machine's load (src/testing/hang-guard.ts).
    testTimeout: hangGuard(30_000),
    hookTimeout: hangGuard(60_000),
    // Two cores in CI: more workers only adds contention.
    maxWorkers: 2,
    // Each worker process keeps its modules from one test file to the next: evaluating the same
    // modules again for every file was over half of the suite's CPU. Tests use no module mocks and
    // stop what they start; the process-wide state a file can leave behind is reset before the
    // next one (test/support/file-setup.ts).
    isolate: false,
    setupFiles: ['test/support/file-setup.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], exclude: ['src/**/*.browser.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts', 'src/**/*.browser.test.ts', 'bench/**/*.test.ts'] } },
    ],
  },
});
