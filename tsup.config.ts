import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { bundleReportClient } from './src/report/html/client-bundle.js';

// The report page's script, bundled once from src/report/client/ and inlined into the build.
const esbuild = createRequire(import.meta.url)('esbuild');
const reportClient = bundleReportClient(esbuild, fileURLToPath(new URL('./src/report/client/main.ts', import.meta.url)));

// The package's entries (package.json `exports`): a small root and one subpath per concern.
const entries = {
  index: 'src/index.ts',
  server: 'src/entries/server.ts',
  report: 'src/entries/report.ts',
  generation: 'src/entries/generation.ts',
  meta: 'src/entries/meta.ts',
  store: 'src/entries/store.ts',
  testing: 'src/entries/testing.ts',
};

export default defineConfig({
  entry: { ...entries, 'cli/main': 'src/cli/main.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: entries },
  sourcemap: true,
  clean: true,
  splitting: true,
  define: { __RUBRICATE_REPORT_CLIENT__: JSON.stringify(reportClient) },
  // Optional and native packages stay out of the bundle; they are resolved at run time.
  external: ['node-llama-cpp', 'better-sqlite3', 'playwright-core', 'openai', 'esbuild'],
  // Small pure-ESM dependencies every command loads are bundled in: resolving zod's many
  // module files one by one is most of the CLI's start-up time.
  noExternal: ['zod', 'jsonrepair'],
});
