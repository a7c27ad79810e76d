/**
 * `rubricate rejudge`: the responses of a results file graded again, with another judge, other
 * judge settings or another rubrics file, through the same pipeline and reply store as `grade`.
 * Every reply whose request is unchanged comes from the store: re-judging with nothing changed
 * makes no call and writes the file back byte for byte; changing one criterion re-judges only
 * the items that carry it. `--dry-run` prices it first.
 */
import type { Command } from 'commander';
import { RubricateError } from '../../errors.js';
import { withoutTextsReason } from '../../formats/results.js';
import { readResults } from '../../results/results.js';
import type { RunSpec } from '../../spec/run-spec.js';
import { addBatchOptions } from '../batch-options.js';
import { quietHelp, type CommandContext } from '../context.js';
import { addDryRunOption } from '../dry-run-options.js';
import { addDrainTimeoutOption } from '../interrupt.js';
import { addJudgeOptions, gradingFlagGroups } from '../judge-options.js';
import { reuseRecordedJudge } from '../recorded-judge.js';
import { runSpecOf } from '../run-spec-flags.js';
import { runGrade, type GradeFlags } from './grade.js';
import { organizeHelp } from '../help.js';

export function registerRejudgeCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('rejudge')
    .description('grade the responses of a results file again (another judge, judge settings or rubrics file), reusing every reply whose request is unchanged')
    .requiredOption('--input <file>', 'results JSONL written by grade (with its texts: not --no-text)')
    .requiredOption('--out <file>', 'results JSONL of the new grading')
    .option('--rubrics <file>', "rubrics (JSONL or JSON list, each with an id) replacing each line's rubric, matched by its rubric_id")
    .option('--metrics <file>', 'write aggregate metrics JSON here (with what this run spent)')
    .option('--strict', 'stop at the first line that cannot be graded again')
    .option('--prices <file>', 'price table (JSON/YAML {model: {input, cached_input, output}} in USD per 1M tokens)')
    .option('--report <file>', 'also write an HTML report at the end')
    .option('--quiet', quietHelp);
  addJudgeOptions(command, [...gradingFlagGroups, 'calibration', 'text']);
  addBatchOptions(command);
  addDryRunOption(command);
  addDrainTimeoutOption(command);
  organizeHelp(command, [
    'rubricate rejudge --input items-results.jsonl --judge openai:gpt-4.1 --out rejudged.jsonl',
    'rubricate rejudge --input items-results.jsonl --rubrics reworded-rubrics.jsonl --out rejudged.jsonl',
  ]);
  command.action(async (flags: GradeFlags, self: Command) => {
    const parsed = await reuseRecordedJudge(runSpecOf(self), flags.input, context);
    const recorded = await firstGradedLine(flags.input);
    // The scoring of the results unless another is named, as `score` does.
    const spec: RunSpec = { ...parsed, scoring: { ...parsed.scoring, name: parsed.scoring.name ?? recorded?.scoring } };
    context.exitCode = await runGrade({ ...flags, format: 'results' }, spec, context, { rejudge: true });
  });
}

/**
 * The first graded line of a results file, refusing at once a file written without its texts:
 * none of its lines could be shown to a judge.
 */
async function firstGradedLine(file: string): Promise<{ scoring?: string } | undefined> {
  for await (const entry of readResults(file)) {
    if (entry.kind !== 'result' || entry.record.status === 'invalid') continue;
    const { record } = entry;
    if (record.prompt === undefined || record.response === undefined) {
      throw new RubricateError('INPUT_WRONG_TYPE', `${file} cannot be re-judged: ${withoutTextsReason}`, { file, line: entry.line, field: record.response === undefined ? 'response' : 'prompt' });
    }
    return { scoring: record.scoring };
  }
  return undefined;
}
