/**
 * The report page's script: the typed modules in `src/report/client/`, bundled by esbuild into
 * one classic script for the self-contained HTML. `npm run build` (scripts/build.ts) bundles it
 * once and inlines the text (esbuild `define`); a source checkout (tests, `npm run rubricate`)
 * bundles on first use with the project's esbuild.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { RubricateError } from '../../errors.js';

declare const __RUBRICATE_REPORT_CLIENT__: string | undefined;

/** The part of esbuild's API the bundle needs (kept structural: esbuild is a build-time tool). */
interface EsbuildSync {
  buildSync(options: Record<string, unknown>): { outputFiles?: Array<{ text: string }> };
}

const clientEntry = fileURLToPath(new URL('../client/main.ts', import.meta.url));

/** Bundles the page script from `entry`; shared by the build (scripts/build.ts) and source runs. */
export function bundleReportClient(esbuild: EsbuildSync, entry: string = clientEntry): string {
  const result = esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    // What the report has always required: DecompressionStream-era browsers.
    target: 'es2017',
    charset: 'utf8',
    legalComments: 'none',
    minifySyntax: true,
    minifyWhitespace: true,
  });
  const text = result.outputFiles?.[0]?.text ?? '';
  // Inline script text must not contain a closing script tag (only strings could hold one).
  return text.replace(/<\/(script)/gi, '<\\/$1');
}

let bundled: string | undefined;

export function reportClientSource(): string {
  if (typeof __RUBRICATE_REPORT_CLIENT__ === 'string') return __RUBRICATE_REPORT_CLIENT__;
  if (bundled !== undefined) return bundled;
  let esbuild: EsbuildSync;
  try {
    esbuild = createRequire(import.meta.url)('esbuild') as EsbuildSync;
  } catch (error) {
    throw new RubricateError('INTERNAL', 'this copy of rubricate has no built report script and esbuild is not installed to bundle it: run `npm run build`', {}, { cause: error });
  }
  bundled = bundleReportClient(esbuild);
  return bundled;
}
