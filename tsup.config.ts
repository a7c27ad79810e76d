import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', 'cli/main': 'src/cli/main.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  splitting: true,
  // Optional and native packages stay out of the bundle; they are resolved at run time.
  external: ['node-llama-cpp', 'better-sqlite3', 'playwright-core'],
});
