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
  // Small pure-ESM dependencies every command loads are bundled in: resolving zod's many
  // module files one by one is most of the CLI's start-up time.
  noExternal: ['zod', 'jsonrepair'],
});
