/**
 * `rubricate calibrate --format llm-rubric`: a calibrator from a judge's per-question answer
 * distributions to the human overall score, fitted and chosen (penalty, features, annotator
 * terms, by cross-validation) on the training set alone, then scored on the test set beside the
 * raw expected answer and the published figures (`src/meta/llm-rubric-calibration.ts`).
 */
import { Option, type Command } from 'commander';
import { RubricateError, exitCodes } from '../../errors.js';
import { calibrateLlmRubric, formatCalibrationReport } from '../../meta/llm-rubric-calibration.js';
import type { LlmRubricSetName } from '../../meta/llm-rubric.js';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { quietHelp, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { parseNumber } from '../judge-options.js';
import { parseConfidence } from './meta.js';

interface CalibrateFlags {
  format: string;
  input: string;
  out: string;
  train: LlmRubricSetName;
  test: LlmRubricSetName;
  seed: number;
  confidence: number;
  quiet?: boolean;
}

const sets: LlmRubricSetName[] = ['synthetic', 'real'];

export function registerCalibrateCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('calibrate')
    .description('learn the human overall score from a judge\u2019s per-question answers on one set, and test it on another')
    .addOption(new Option('--format <name>', 'the labelled judge answers: llm-rubric (LLM-Rubric\u2019s folder)').choices(['llm-rubric']).makeOptionMandatory())
    .requiredOption('--input <dir>', 'the LLM-Rubric folder (its data/ layout, or the files as real_data__NAME and synth_data__NAME)')
    .requiredOption('--out <file>', 'calibration JSON: the calibrator, the cross-validation table and the test figures')
    .addOption(new Option('--train <set>', 'the set the calibrator is fitted and chosen on').choices(sets).default('synthetic'))
    .addOption(new Option('--test <set>', 'the set it is only scored on').choices(sets).default('real'))
    .option('--seed <n>', 'seed of the cross-validation folds', parseNumber('seed'), 0)
    .option('--confidence <level>', 'confidence level of the correlation intervals', parseConfidence, 0.95)
    .option('--quiet', quietHelp);
  organizeHelp(command, [
    'rubricate calibrate --format llm-rubric --train synthetic --test real --input LLM-Rubric --out calibration.json',
    'rubricate calibrate --format llm-rubric --input LLM-Rubric --seed 1 --out calibration.json',
  ]);
  command.action(async (flags: CalibrateFlags) => {
    checkFiles({ inputs: [{ flag: 'input', path: flags.input, folder: true }], outputs: [{ flag: 'out', path: flags.out }] });
    if (flags.train === flags.test) throw new RubricateError('CONFIG_INVALID', `--train and --test must be different sets (both are ${flags.train})`, { field: 'test' });
    const report = await calibrateLlmRubric(flags.input, { train: flags.train, test: flags.test, seed: flags.seed, confidence: flags.confidence });
    await writeFileAtomic(flags.out, `${JSON.stringify(report, null, 2)}\n`);
    if (!flags.quiet) context.stderr(`${formatCalibrationReport(report)}\ncalibration: ${flags.out}`);
    context.exitCode = exitCodes.success;
  });
}
