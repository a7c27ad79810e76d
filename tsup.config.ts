import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { bundleReportClient } from './src/report/html/client-bundle.js';

// The report page's script, bundled once from src/report/client/ and inlined into the build.
const esbuild = createRequire(import.meta.url)('esbuild');
const reportClient = bundleReportClient(esbuild, fileURLToPath(new URL('./src/report/client/main.ts', import.meta.url)));

export default defineConfig({
  entry: { index: 'src/index.ts', 'cli/main': 'src/cli/main.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { index: 'src/index.ts' } },
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
