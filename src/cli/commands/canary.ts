/**
 * `rubricate canary`: the judge drift canary. The first run grades the golden labelled set and
 * pins a baseline in `--baseline DIR`; every later run grades it again, compares the judge's
 * resolved identity, its agreement with the labels and its verdicts with the baseline, and exits 3
 * with a report (`DIR/drift-report.json`) when they left it. A run without drift prints one line.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { RubricateError, exitCodes } from '../../errors.js';
import { baselineOf, compareWithBaseline, parseBaseline, readCanaryRun, type CanaryBaseline } from '../../meta/canary.js';
import { loadLabels } from '../../meta/labels.js';
import { readJsonFile } from '../../formats/shared.js';
import { itemImporters } from '../../formats/index.js';
import type { RunSpec } from '../../spec/run-spec.js';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { sha256OfFile } from '../../util/hash.js';
import { quietHelp, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { addJudgeOptions, parseNumber } from '../judge-options.js';
import { runSpecOf } from '../run-spec-flags.js';
import type { SessionFlags } from '../session.js';
import { addDrainTimeoutOption, type DrainFlags } from '../interrupt.js';
import { runGrade } from './grade.js';
import { parseConfidence, parseResamples } from './meta.js';

interface CanaryFlags extends SessionFlags, DrainFlags {
  golden: string;
  labels: string;
  baseline: string;
  format: string;
  responses?: string;
  rubrics?: string;
  accept?: boolean;
  maxFlipRate?: number;
  bootstrapResamples: number;
  bootstrapSeed: number;
  confidence: number;
  quiet?: boolean;
}

function parseRate(value: string): number {
  const number = Number(value);
  if (!(number >= 0 && number <= 1)) throw new RubricateError('CONFIG_INVALID', `--max-flip-rate must be between 0 and 1, got "${value}"`, { field: 'max-flip-rate' });
  return number;
}

export function registerCanaryCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('canary')
    .description("judge drift canary: grade a golden labelled set, pin the judge's resolved identity, agreement and verdicts, and exit 3 with a report when a later run leaves them")
    .requiredOption('--golden <file>', 'the golden items (with responses), in --format')
    .requiredOption('--labels <file>', 'human labels of the golden items (the format align and meta --labels read)')
    .requiredOption('--baseline <dir>', 'folder of the pinned baseline (created on the first run), the latest results and the drift report')
    .option('--format <name>', `format of --golden (${itemImporters.names().join(', ')})`, 'items')
    .option('--responses <file>', 'responses JSONL joined onto the golden examples (formats that carry no responses)')
    .option('--rubrics <file>', 'rubrics (JSONL or JSON list, each with an id) for golden items that give rubric_id')
    .option('--accept', 'pin this run as the new baseline (after a drift was reviewed and accepted)')
    .option('--max-flip-rate <share>', "share of verdicts that may flip before it is drift (default: half the width of the baseline's agreement interval)", parseRate)
    .option('--bootstrap-resamples <n>', 'bootstrap resamples for the agreement interval', parseResamples, 1000)
    .option('--bootstrap-seed <n>', 'bootstrap seed', parseNumber('bootstrap-seed'), 0)
    .option('--confidence <level>', 'confidence level of the agreement interval', parseConfidence, 0.95)
    .option('--quiet', quietHelp);
  addJudgeOptions(command, ['plan', 'sampling', 'protocol', 'template', 'calls', 'text', 'limits']);
  addDrainTimeoutOption(command);
  organizeHelp(command, [
    'rubricate canary --golden examples/canary/golden.jsonl --labels examples/canary/labels.jsonl --judge openai:gpt-4o-mini --baseline canary/',
    'rubricate canary --golden examples/canary/golden.jsonl --labels examples/canary/labels.jsonl --judge scripted --baseline canary-offline/',
  ]).action(async (flags: CanaryFlags, self: Command) => {
    context.exitCode = await runCanary(flags, runSpecOf(self), context);
  });
}

async function runCanary(flags: CanaryFlags, spec: RunSpec, context: CommandContext): Promise<number> {
  // Cached replies would hide the very change a canary exists to see: every run asks the judge.
  if (typeof flags.cache === 'string' || flags.store !== undefined) throw new RubricateError('CONFIG_INVALID', 'canary asks the judge afresh on every run (a cached reply would hide a changed model): leave out --cache and --store', { field: typeof flags.cache === 'string' ? 'cache' : 'store' });
  mkdirSync(flags.baseline, { recursive: true });
  const paths = { baseline: join(flags.baseline, 'baseline.json'), results: join(flags.baseline, 'latest-results.jsonl'), report: join(flags.baseline, 'drift-report.json') };
  checkFiles({
    inputs: [{ flag: 'golden', path: flags.golden }, { flag: 'labels', path: flags.labels }, { flag: 'responses', path: flags.responses }, { flag: 'rubrics', path: flags.rubrics }],
    outputs: [{ flag: 'baseline', path: paths.results }, { flag: 'baseline', path: paths.report }, { flag: 'baseline', path: paths.baseline }],
  });
  const golden = { items_sha256: await sha256OfFile(flags.golden), labels_sha256: await sha256OfFile(flags.labels) };
  const pinned = existsSync(paths.baseline) && !flags.accept ? parseBaseline(await readJsonFile(paths.baseline), paths.baseline) : undefined;
  if (pinned && (pinned.golden.items_sha256 !== golden.items_sha256 || pinned.golden.labels_sha256 !== golden.labels_sha256)) {
    throw new RubricateError('CONFIG_INVALID', `the golden items or labels changed since the baseline in ${paths.baseline} was pinned: pin the new set with --accept`, { field: 'golden' });
  }
  const graded = await runGrade({ ...flags, input: flags.golden, out: paths.results, cache: false, quiet: true, table: false, queueTimeout: Number.POSITIVE_INFINITY }, spec, context);
  if (graded !== exitCodes.success) {
    context.stderr(`canary: the golden set did not grade cleanly (exit ${graded}): nothing compared, no baseline pinned; see ${paths.results}`);
    return graded;
  }
  const run = await readCanaryRun(paths.results, await loadLabels(flags.labels), { resamples: flags.bootstrapResamples, seed: flags.bootstrapSeed, confidence: flags.confidence });
  if (!pinned) return pin(baselineOf(run, golden), paths.baseline, context, flags);
  const report = compareWithBaseline(pinned, run, { maxFlipRate: flags.maxFlipRate });
  const label = report.made_up ? ' [made-up verdicts: no model was asked]' : '';
  if (!report.drift) {
    if (!flags.quiet) context.stderr(`canary${label}: no drift (${run.identity.resolved_models.join(', ')}; agreement ${run.agreement.accuracy.toFixed(4)} inside ${pinned.agreement.interval.lower.toFixed(4)}–${pinned.agreement.interval.upper.toFixed(4)}; ${report.flips.flipped} of ${report.flips.compared} verdicts flipped)`);
    return exitCodes.success;
  }
  await writeFileAtomic(paths.report, `${JSON.stringify({ kind: 'rubricate-canary-report', ...report }, null, 2)}\n`);
  context.stderr(`canary${label}: DRIFT, report in ${paths.report}`);
  for (const reason of report.reasons) context.stderr(`  ${reason}`);
  context.stderr('  review it; once accepted, pin the new judge with --accept');
  return exitCodes.itemsFailed;
}

async function pin(baseline: CanaryBaseline, file: string, context: CommandContext, flags: { quiet?: boolean; accept?: boolean }): Promise<number> {
  await writeFileAtomic(file, `${JSON.stringify(baseline)}\n`);
  if (!flags.quiet) {
    const { accuracy, interval } = baseline.agreement;
    context.stderr(`canary${baseline.made_up ? ' [made-up verdicts: no model was asked]' : ''}: ${flags.accept ? 'baseline re-pinned' : 'baseline pinned'} in ${file}: ${baseline.identity.judge} answering as ${baseline.identity.resolved_models.join(', ')}, agreement ${accuracy.toFixed(4)} (${Math.round(interval.confidence * 100)}% interval ${interval.lower.toFixed(4)}–${interval.upper.toFixed(4)}), ${baseline.verdicts.length} verdicts`);
  }
  return exitCodes.success;
}
