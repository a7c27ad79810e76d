/**
 * `rubricate calibrate`: a calibrator from a judge's per-criterion (or per-question) answers to the
 * overall score people gave, fitted and chosen by cross-validation on training data alone, then
 * scored on held-out data beside the raw scores.
 *
 * - `--format results --input RESULTS --labels SCORES`: a score calibration that
 *   `grade --calibration FILE` applies (`src/meta/score-calibration.ts`);
 * - `--format llm-rubric --input DIR`: LLM-Rubric's nine answer distributions to the annotators'
 *   Q0, trained on one set and tested on the other (`src/meta/llm-rubric-calibration.ts`).
 */
import { Option, type Command } from 'commander';
import { RubricateError, exitCodes } from '../../errors.js';
import { calibrateLlmRubric, formatCalibrationReport } from '../../meta/llm-rubric-calibration.js';
import type { LlmRubricSetName } from '../../meta/llm-rubric.js';
import { fitScoreCalibration, type ScoreCalibrationReport } from '../../meta/score-calibration.js';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { quietHelp, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { parseNumber } from '../judge-options.js';
import { parseConfidence } from './meta.js';

interface CalibrateFlags {
  format: 'llm-rubric' | 'results';
  input: string;
  out: string;
  labels?: string;
  train?: LlmRubricSetName;
  test?: LlmRubricSetName;
  testFraction?: number;
  seed: number;
  confidence: number;
  quiet?: boolean;
}

const sets: LlmRubricSetName[] = ['synthetic', 'real'];

function parseTestFraction(value: string): number {
  const number = Number(value);
  if (!(number > 0 && number < 1)) throw new RubricateError('CONFIG_INVALID', `--test-fraction must be between 0 and 1, got "${value}"`, { field: 'test-fraction' });
  return number;
}

export function registerCalibrateCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('calibrate')
    .description('learn the overall score people give from a judge\u2019s per-criterion answers on training data, and test it on held-out data')
    .addOption(new Option('--format <name>', 'results (a results file with --labels: a calibration for grade --calibration) | llm-rubric (LLM-Rubric\u2019s folder)').choices(['results', 'llm-rubric']).makeOptionMandatory())
    .requiredOption('--input <path>', 'results: the results JSONL; llm-rubric: the folder (its data/ layout, or the files as real_data__NAME and synth_data__NAME)')
    .requiredOption('--out <file>', 'calibration JSON: the calibrator, the cross-validation table and the held-out figures')
    .option('--labels <file>', 'results: the overall score people gave each item, JSONL {"id": …, "score": …}')
    .option('--test-fraction <share>', 'results: share of the labelled items held out for testing (default 0.3)', parseTestFraction)
    .addOption(new Option('--train <set>', 'llm-rubric: the set the calibrator is fitted and chosen on (default synthetic)').choices(sets))
    .addOption(new Option('--test <set>', 'llm-rubric: the set it is only scored on (default real)').choices(sets))
    .option('--seed <n>', 'seed of the split and of the cross-validation folds', parseNumber('seed'), 0)
    .option('--confidence <level>', 'confidence level of the correlation intervals', parseConfidence, 0.95)
    .option('--quiet', quietHelp);
  organizeHelp(command, [
    'rubricate calibrate --format results --input items-results.jsonl --labels overall-scores.jsonl --out calibration.json',
    'rubricate calibrate --format llm-rubric --train synthetic --test real --input LLM-Rubric --out calibration.json',
  ]);
  command.action(async (flags: CalibrateFlags) => {
    checkFiles({ inputs: [{ flag: 'input', path: flags.input, folder: flags.format === 'llm-rubric' }, { flag: 'labels', path: flags.labels }], outputs: [{ flag: 'out', path: flags.out }] });
    const say = (text: string) => {
      if (!flags.quiet) context.stderr(text);
    };
    if (flags.format === 'results') {
      if (!flags.labels) throw new RubricateError('CONFIG_INVALID', '--format results needs --labels FILE (the overall score people gave each item)', { field: 'labels' });
      const unread = (['train', 'test'] as const).find((name) => flags[name] !== undefined);
      if (unread) throw new RubricateError('CONFIG_INVALID', `--${unread} chooses an LLM-Rubric set: --format results splits its items with --test-fraction`, { field: unread });
      const report = await fitScoreCalibration(flags.input, flags.labels, { seed: flags.seed, testFraction: flags.testFraction ?? 0.3, confidence: flags.confidence });
      await writeFileAtomic(flags.out, `${JSON.stringify({ ...report.calibration, fit: report.fit }, null, 2)}\n`);
      say(`${formatScoreCalibration(report)}\ncalibration: ${flags.out} (apply it with grade --calibration)`);
    } else {
      if (flags.labels) throw new RubricateError('CONFIG_INVALID', '--format llm-rubric reads the human answers from its folder: leave out --labels', { field: 'labels' });
      if (flags.testFraction !== undefined) throw new RubricateError('CONFIG_INVALID', '--format llm-rubric trains on one set and tests on the other: leave out --test-fraction', { field: 'test-fraction' });
      const train = flags.train ?? 'synthetic';
      const test = flags.test ?? 'real';
      if (train === test) throw new RubricateError('CONFIG_INVALID', `--train and --test must be different sets (both are ${train})`, { field: 'test' });
      const report = await calibrateLlmRubric(flags.input, { train, test, seed: flags.seed, confidence: flags.confidence });
      await writeFileAtomic(flags.out, `${JSON.stringify(report, null, 2)}\n`);
      say(`${formatCalibrationReport(report)}\ncalibration: ${flags.out}`);
    }
    context.exitCode = exitCodes.success;
  });
}

function formatScoreCalibration(report: ScoreCalibrationReport): string {
  const show = (value: number | null) => (value === null ? 'n/a' : value.toFixed(3));
  const { fit, calibration } = report;
  const { calibrated, rawScore } = fit.test;
  return [
    `fitted on ${fit.split.train.length} items (${calibration.criteria.length} criteria); cross-validation chose lambda ${calibration.lambda}; ${fit.items.withoutVerdicts} labelled results left out for a missing verdict`,
    `held out (${fit.split.test.length} items)   pearson spearman  kendall     rmse`,
    `calibrated score        ${[calibrated.pearson.value, calibrated.spearman.value, calibrated.kendall.value, calibrated.rmse].map((value) => show(value).padStart(8)).join(' ')}`,
    `the results' own score  ${[rawScore.pearson.value, rawScore.spearman.value, rawScore.kendall.value].map((value) => show(value).padStart(8)).join(' ')}      n/a`,
  ].join('\n');
}
