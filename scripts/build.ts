/**
 * `npm run build` (and `prepack`): dist/ as the package ships it. esbuild bundles the entries
 * (ESM, shared chunks, the report page's script inlined) and TypeScript emits their declarations.
 * Neither needs a native optional package besides esbuild's own binary, so the light install
 * (`npm ci --omit=optional`) builds as the full one does.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import ts from 'typescript';
import { bundleReportClient } from '../src/report/html/client-bundle.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The package's entries (package.json `exports`): a small root and one subpath per concern. */
const packageEntries = {
  index: 'src/index.ts',
  server: 'src/entries/server.ts',
  report: 'src/entries/report.ts',
  generation: 'src/entries/generation.ts',
  meta: 'src/entries/meta.ts',
  store: 'src/entries/store.ts',
  testing: 'src/entries/testing.ts',
};

/**
 * Small pure-ESM dependencies every command loads are bundled in (resolving zod's many module
 * files one by one is most of the CLI's start-up time); every other package, native and optional
 * ones included, is resolved at run time.
 */
const bundled = /^(zod|jsonrepair)(\/|$)/;

const externalPackages: esbuild.Plugin = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (bundled.test(args.path) ? undefined : { path: args.path, external: true }));
  },
};

async function bundle(): Promise<void> {
  const reportClient = bundleReportClient(esbuild, fileURLToPath(new URL('../src/report/client/main.ts', import.meta.url)));
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: { ...packageEntries, 'cli/main': 'src/cli/main.ts' },
    outdir: 'dist',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    define: { __RUBRICATE_REPORT_CLIENT__: JSON.stringify(reportClient) },
    plugins: [externalPackages],
    logLevel: 'warning',
  });
}

/**
 * Declarations for every source file under dist/types (the `types` of each entry). Only the
 * declaration emit's own errors fail the build: type errors are the type check's to report, and a
 * light install lacks the optional packages some types name.
 */
function declarations(): void {
  const config = ts.getParsedCommandLineOfConfigFile(`${root}tsconfig.build.json`, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  if (!config) throw new Error('tsconfig.build.json could not be read');
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const { diagnostics } = program.emit(undefined, undefined, undefined, true);
  if (diagnostics.length > 0) {
    const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => root, getNewLine: () => '\n' };
    throw new Error(`declarations could not be emitted:\n${ts.formatDiagnostics(diagnostics, host)}`);
  }
}

const started = Date.now();
rmSync(`${root}dist`, { recursive: true, force: true });
// Declarations first: dist/cli/main.js, written last, is what marks a build complete (bin/build-state.js).
// A line as each step starts and ends, so a slow machine never shows a minute of silence.
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const declarationsStarted = Date.now();
process.stderr.write('rubricate: building dist/: type declarations…\n');
declarations();
const bundleStarted = Date.now();
process.stderr.write(`rubricate: type declarations done in ${seconds(declarationsStarted)}; bundling with esbuild…\n`);
await bundle();
process.stderr.write(`rubricate: bundle done in ${seconds(bundleStarted)}; built dist/ in ${seconds(started)}\n`);
