/**
 * `rubricate align`: a judge aligned to human labels. From a results file (with its texts) and
 * a labels file, it splits the labelled items into train and test, chooses examples and
 * rewordings and fits a calibrator on train only, and writes the alignment that `grade`,
 * `compare`, `serve` and `rejudge` apply with `--alignment FILE`, with the test split's
 * agreement before and after, the calls it took and their cost.
 */
import type { Command } from 'commander';
import { costOf, defaultPrices, emptyUsage, loadPriceTable, priceFor } from '../../engine/usage.js';
import { madeUpBy, madeUpFields, madeUpNotice } from '../../util/made-up.js';
import { RubricateError, exitCodes } from '../../errors.js';
import { rewordCriterion } from '../../generation/reword.js';
import { configuredJudgeSpec, createJudge } from '../../judges/registry.js';
import { reuseRecordedJudge } from '../recorded-judge.js';
import { alignJudge, type AlignReport, type SplitAgreement } from '../../meta/align.js';
import { loadLabels } from '../../meta/labels.js';
import { Grader } from '../../pipeline/grader.js';
import type { RunSpec } from '../../spec/run-spec.js';
import { fitScoreCalibration } from '../../meta/score-calibration.js';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { quietHelp, reportInputError, type CommandContext } from '../context.js';
import { addJudgeOptions, parseNumber, parsePositiveInteger, withConfiguredModel } from '../judge-options.js';
import { loadRubrics } from '../rubrics-file.js';
import { addModelOptions, modelFromFlags, refuseUnreadModelFlags, runSpecOf } from '../run-spec-flags.js';
import { openRunSession, type SessionFlags } from '../session.js';
import { storeFilesOf } from '../store-options.js';
import { parseConfidence, parseResamples } from './meta.js';
import { organizeHelp } from '../help.js';

interface AlignFlags extends SessionFlags {
  input: string;
  labels: string;
  out: string;
  rubrics?: string;
  splitSeed: number;
  testFraction: number;
  examplesPerVerdict: number;
  reword: boolean;
  rewordBelow: number;
  maxRewordings: number;
  generatorMaxTokens: number;
  generatorAttempts: number;
  bootstrapResamples: number;
  bootstrapSeed: number;
  confidence: number;
  prices?: string;
  scores?: string;
  calibrationOut?: string;
}

function parseShare(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!(number > 0 && number < 1)) throw new RubricateError('CONFIG_INVALID', `--${name} must be between 0 and 1, got "${value}"`, { field: name });
    return number;
  };
}

export function registerAlignCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('align')
    .description('align a judge to human labels: examples, rewordings and a calibrator chosen on a train split, agreement measured on the held-out test split; writes an alignment file for --alignment')
    .requiredOption('--input <file>', 'results JSONL of the judge on the labelled items (with their texts)')
    .requiredOption('--labels <file>', 'human labels JSONL (the format meta --labels reads, as the report exports it)')
    .requiredOption('--out <file>', 'alignment JSON to write')
    .option('--rubrics <file>', "rubrics (JSONL or JSON list, each with an id) for results lines that cannot hold theirs, by rubric_id")
    .option('--split-seed <n>', 'seed of the train/test split and of the example order', parseNumber('split-seed'), 0)
    .option('--test-fraction <share>', 'share of the labelled items held out for testing', parseShare('test-fraction'), 0.3)
    .option('--examples-per-verdict <n>', 'examples of each verdict (met, not met) per criterion or tag, at most 5', parsePositiveInteger('examples-per-verdict'), 2)
    .option('--no-reword', 'do not ask the generator to reword criteria')
    .option('--reword-below <share>', 'reword criteria whose train agreement is below this', parseShare('reword-below'), 0.8)
    .option('--max-rewordings <n>', 'criteria reworded at most, the worst first', parsePositiveInteger('max-rewordings'), 5)
    .option('--generator-max-tokens <n>', 'max tokens per rewording', parsePositiveInteger('generator-max-tokens'), 1024)
    .option('--generator-attempts <n>', 'calls per rewording before it fails (bad answers and transport errors alike)', parsePositiveInteger('generator-attempts'), 4)
    .option('--bootstrap-resamples <n>', 'bootstrap resamples for the agreement intervals (0 = none)', parseResamples, 1000)
    .option('--bootstrap-seed <n>', 'bootstrap seed', parseNumber('bootstrap-seed'), 0)
    .option('--confidence <level>', 'confidence level of the intervals', parseConfidence, 0.95)
    .option('--scores <file>', 'the overall score people gave each item, JSONL {"id": …, "score": …}: also fit a score calibration on the train split (tested on the test split) and write it to --calibration-out, for grade --calibration')
    .option('--calibration-out <file>', 'with --scores: where to write the score calibration')
    .option('--prices <file>', 'price table (JSON/YAML {model: {input, cached_input, output}} in USD per 1M tokens)')
    .option('--quiet', quietHelp);
  // The judge as it grades (plan, sampling, calls): the alignment is what this command writes.
  addJudgeOptions(command, ['plan', 'batching', 'sampling', 'calls', 'fleet']);
  addModelOptions(command, 'generator');
  organizeHelp(command, [
    'rubricate align --input items-results.jsonl --labels examples/labels/items-labels.jsonl --judge openai:gpt-4.1-mini --generator openai:gpt-4.1 --out alignment.json',
    'rubricate align --input items-results.jsonl --labels examples/labels/items-labels.jsonl --judge openai:gpt-4.1-mini --no-reword --test-fraction 0.5 --out alignment.json',
  ]);
  command.action(async (flags: AlignFlags, self: Command) => {
    context.exitCode = await runAlign(flags, await reuseRecordedJudge(runSpecOf(self), flags.input, context), context);
  });
}

async function runAlign(flags: AlignFlags, spec: RunSpec, context: CommandContext): Promise<number> {
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'labels', path: flags.labels }, { flag: 'rubrics', path: flags.rubrics }, { flag: 'prices', path: flags.prices }, { flag: 'scores', path: flags.scores }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'calibration-out', path: flags.calibrationOut }],
    keep: storeFilesOf(flags),
  });
  if ((flags.scores === undefined) !== (flags.calibrationOut === undefined)) throw new RubricateError('CONFIG_INVALID', '--scores and --calibration-out go together: the overall scores to fit a score calibration on, and where to write it', { field: flags.scores === undefined ? 'scores' : 'calibration-out' });
  const prices = flags.prices ? loadPriceTable(flags.prices) : defaultPrices;
  const say = (line: string) => {
    if (!flags.quiet) context.stderr(line);
  };
  const labels = await loadLabels(flags.labels, { onInvalid: (error) => reportInputError(context, error) });
  const rubrics = flags.rubrics ? await loadRubrics(flags.rubrics) : undefined;
  const session = await openRunSession(spec, modelFromFlags(flags, 'judge').credentials, flags, { context, out: flags.out, needsJudge: 'align needs a judge to grade with (not --judge none)' });
  try {
    let generator;
    if (flags.reword) {
      const model = modelFromFlags(flags, 'generator');
      const [given] = model.models;
      // No --generator and none configured: the judge rewords its own criteria (the one given, or recorded in the results).
      const judgeModel = spec.judges.find((judge) => judge.model !== undefined)?.model;
      const modelSpec = given.model === undefined && configuredJudgeSpec() === undefined && judgeModel !== undefined ? { ...given, model: judgeModel } : withConfiguredModel(given, 'generator');
      refuseUnreadModelFlags([modelSpec], model.credentials, 'generator');
      generator = await createJudge(modelSpec, model.credentials);
      if (!generator) throw new RubricateError('CONFIG_INVALID', 'rewording needs a generator model (not "none"): give --generator SPEC, or --no-reword', { field: 'generator' });
      session.adopt(generator);
    }
    const generatorUsage = emptyUsage();
    const graderOptions = session.graderOptions();
    const verdict = spec.plan.verdict ?? 'binary';
    if (verdict === 'expected-score') throw new RubricateError('CONFIG_INVALID', 'align fits examples and a calibrator on binary or probability verdicts: use --verdict binary or probability', { field: 'verdict' });
    const outcome = await alignJudge(flags.input, labels, {
      graderFor: (alignment) => new Grader({ ...graderOptions, plan: { ...spec.plan, ...(alignment ? { alignment } : {}) }, signal: context.signal }),
      ...(generator
        ? {
            reword: (request) => rewordCriterion(request, { generator: generator!, store: session.store, usage: generatorUsage, maxAttempts: flags.generatorAttempts, maxTokens: flags.generatorMaxTokens, signal: context.signal }),
            generatorUsage,
          }
        : {}),
      verdict,
      rubrics,
      seed: flags.splitSeed,
      testFraction: flags.testFraction,
      examplesPerVerdict: flags.examplesPerVerdict,
      rewordBelow: flags.rewordBelow,
      maxRewordings: flags.maxRewordings,
      bootstrap: { resamples: flags.bootstrapResamples, seed: flags.bootstrapSeed, confidence: flags.confidence },
      onProgress: say,
      onInvalid: (error) => reportInputError(context, error),
    });
    const judgeModel = session.judge?.provenance.model;
    const cost = {
      judge: judgeModel ? costOf(outcome.report.usage.judge, priceFor(judgeModel, prices)) : null,
      generator: generator ? costOf(generatorUsage, priceFor(generator.provenance.model, prices)) : 0,
    };
    const file = {
      ...outcome.alignment,
      fit: {
        ...madeUpFields(madeUpBy(session.judge?.provenance)),
        judge: session.judge?.provenance.id ?? null,
        verdict: spec.plan.verdict ?? 'binary',
        inputs: { results: flags.input, labels: flags.labels },
        split: outcome.split,
        report: outcome.report,
        cost_usd: cost,
        note: 'Agreement measured on the held-out test split of these labels, with this judge. rubricate does not measure what alignment gains on real models: its own tests use a scripted judge.',
      },
    };
    await writeFileAtomic(flags.out, `${JSON.stringify(file, null, 2)}\n`);
    const scoreCalibration = flags.scores && flags.calibrationOut ? await writeScoreCalibration(flags.input, flags.scores, flags.calibrationOut, outcome.split, flags) : undefined;
    session.finish();
    const madeUp = madeUpBy(session.judge?.provenance);
    context.stderr(`${madeUp !== undefined ? `${madeUpNotice(madeUp)}\n` : ''}${describeAlignment(outcome.report, cost, flags.out)}`);
    if (scoreCalibration) context.stderr(scoreCalibration);
    return outcome.report.unusableLines > 0 || labels.invalid.length > 0 ? exitCodes.itemsFailed : exitCodes.success;
  } finally {
    await session.close();
  }
}

/**
 * The score calibration `align` offers beside its alignment: fitted on the input results of the
 * train split's items and tested on the test split's, so it never learns from an item the
 * alignment is tested on. It reads the verdicts as the input results hold them (before alignment).
 */
async function writeScoreCalibration(results: string, scores: string, out: string, split: { train: string[]; test: string[] }, flags: AlignFlags): Promise<string> {
  const report = await fitScoreCalibration(results, scores, { seed: flags.splitSeed, testFraction: flags.testFraction, confidence: flags.confidence, split });
  await writeFileAtomic(out, `${JSON.stringify({ ...report.calibration, fit: report.fit }, null, 2)}\n`);
  const { calibrated, rawScore } = report.fit.test;
  return `score calibration: ${out} (lambda ${report.calibration.lambda}; test split Pearson ${figure(calibrated.pearson.value)}, the results' own score ${figure(rawScore.pearson.value)}; apply it with grade --calibration ${out})`;
}

function figure(value: number | null): string {
  return value === null ? 'n/a' : value.toFixed(3);
}

function agreementLine(name: string, agreement: SplitAgreement): string {
  const interval = (entry: { lower: number; upper: number } | null) => (entry ? ` [${entry.lower.toFixed(3)}, ${entry.upper.toFixed(3)}]` : '');
  return `  ${name}: κ ${figure(agreement.cohenKappa)}${interval(agreement.intervals.cohenKappa)}, balanced F1 ${figure(agreement.balancedF1)}${interval(agreement.intervals.balancedF1)}, accuracy ${figure(agreement.accuracy)}${interval(agreement.intervals.accuracy)} (${agreement.pairs} verdicts)`;
}

function describeAlignment(report: AlignReport, cost: { judge: number | null; generator: number | null }, out: string): string {
  const money = (value: number | null) => (value === null ? 'n/a' : `$${value.toFixed(4)}`);
  const kept = report.rewordings.filter((entry) => entry.kept).length;
  return [
    `test split (${report.split.items.test} items never used to align):`,
    ...(report.split.duplicates.items > 0 ? [`  split by text: ${report.split.duplicates.items} items share their text with another (${report.split.duplicates.texts} texts), each text kept on one side`] : []),
    agreementLine('before', report.test.before),
    agreementLine('after ', report.test.after),
    `examples: ${report.examples.examples} (${report.examples.criteria} criteria, ${report.examples.tags} tags); rewordings: ${kept} kept of ${report.rewordings.length} tried; calibrator: ${report.calibrator ? `threshold ${report.calibrator.threshold.toFixed(3)}` : 'none'}`,
    `calls: judge ${report.usage.judge.calls} (${report.usage.judge.cache_hits} cached), generator ${report.usage.generator.calls} (${report.usage.generator.cache_hits} cached); cost: judge ${money(cost.judge)}, generator ${money(cost.generator)}`,
    `alignment: ${out} (apply it with --alignment ${out})`,
  ].join('\n');
}
