/**
 * `rubricate rubric-reward`: the reward of candidate rubrics, as a rubric-generator trainer gets
 * it from `serve` (`POST /v1/rubric-reward`), for a file of them. Each input line holds a
 * prompt, a candidate rubric and either labelled preference pairs or responses with expert
 * scores; each output line, in input order, its reward (share of pairs reproduced, or rank
 * correlation with the experts), the figures behind it and the responses' separation. The
 * responses of a line are graded as a group (one listwise call with `--mode listwise`).
 */
import type { Command } from 'commander';
import { addUsage, emptyUsage } from '../../engine/usage.js';
import { exitCodes, RubricateError, toRubricateError } from '../../errors.js';
import { parseRubricRewardInput, rubricQuality, rubricRewardItems } from '../../generation/rubric-reward.js';
import { Grader } from '../../pipeline/grader.js';
import { memoizedRubricHash } from '../../rubric/hashing.js';
import { normalizeRubric } from '../../rubric/normalize.js';
import { parseRubricValue } from '../../server/input.js';
import { checkFiles, JsonLinesWriter } from '../../util/files.js';
import { parseLineJson, readLines } from '../../util/jsonl.js';
import { rubricateVersion } from '../../version.js';
import { reportInputError, type CommandContext } from '../context.js';
import { addJudgeOptions } from '../judge-options.js';
import { modelFromFlags, runSpecOf } from '../run-spec-flags.js';
import { openRunSession, type SessionFlags } from '../session.js';
import { storeFilesOf } from '../store-options.js';
import type { RunSpec } from '../../spec/run-spec.js';
import { organizeHelp } from '../help.js';

interface RubricRewardFlags extends SessionFlags {
  input: string;
  out: string;
}

export function registerRubricRewardCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('rubric-reward')
    .description('reward candidate rubrics by how well they reproduce preference pairs or expert scores (what a rubric-generator trainer gets from serve)')
    .requiredOption('--input <file>', 'JSONL: {id?, prompt, rubric, reference?, pairs: [{chosen, rejected}] | responses: [{response, score}], reward?}')
    .option('--out <file>', 'one JSON line per input line', 'rubric-rewards.jsonl');
  addJudgeOptions(command, ['plan', 'batching', 'sampling', 'calls', 'jury', 'scoring', 'fleet', 'limits']);
  organizeHelp(command, [
    'rubricate rubric-reward --input candidate-rubrics.jsonl --judge openai:gpt-4.1-mini --out rubric-rewards.jsonl',
    'rubricate rubric-reward --input candidate-rubrics.jsonl --judge openai:gpt-4.1-mini --mode listwise --out rubric-rewards.jsonl',
  ]);
  command.action(async (flags: RubricRewardFlags, self: Command) => {
    context.exitCode = await runRubricReward(flags, runSpecOf(self), context);
  });
}

async function runRubricReward(flags: RubricRewardFlags, spec: RunSpec, context: CommandContext): Promise<number> {
  checkFiles({ inputs: [{ flag: 'input', path: flags.input }], outputs: [{ flag: 'out', path: flags.out }], keep: storeFilesOf(flags) });
  const session = await openRunSession({ ...spec, scoring: { ...spec.scoring, name: spec.scoring.name ?? 'weighted_mean' } }, modelFromFlags(flags, 'judge').credentials, flags, { context, out: flags.out, needsJudge: 'rubric-reward grades responses: give --judge' });
  let failed = 0;
  try {
    const grader = new Grader({ ...session.graderOptions(), omitText: true });
    const writer = new JsonLinesWriter(flags.out);
    try {
      const lines = readLines(flags.input);
      for await (const line of grader.inInputOrder(lines, async ({ line, text, error }) => {
        try {
          const parsed = parseLineJson(text, error);
          if (!parsed.ok) throw new RubricateError('INPUT_INVALID', parsed.error, { file: flags.input, line });
          const input = parseRubricRewardInput(parsed.value, { file: flags.input, line });
          const rubric = normalizeRubric(parseRubricValue(input.rubric), { file: flags.input, line, fieldPrefix: 'rubric' });
          const id = input.id !== undefined ? String(input.id) : `rubric_${memoizedRubricHash(rubric).slice(0, 16)}`;
          const { responses, items } = rubricRewardItems(input, rubric, id);
          const records = await grader.gradeGroup(items, id);
          const usage = emptyUsage();
          for (const record of records) if (record.usage) addUsage(usage, record.usage);
          const quality = rubricQuality(input, new Map(responses.map((response, index) => [response, records[index].status === 'ok' ? records[index].score : null])));
          const firstError = records.find((record) => record.error)?.error;
          if (quality.reward === null) failed += 1;
          return { id, line, status: quality.reward === null ? 'error' : 'ok', ...quality, ...(quality.reward === null && firstError ? { error: firstError } : {}), judge: grader.judgeInfo ?? null, usage, rubricate_version: rubricateVersion };
        } catch (caught) {
          const problem = toRubricateError(caught, 'INPUT_INVALID');
          if (problem.code !== 'INPUT_INVALID' && problem.code !== 'LIMIT_EXCEEDED') throw problem;
          reportInputError(context, problem);
          failed += 1;
          // A line over a bound (--max-group-size) is not graded; the rest of the file is.
          return { line, status: problem.code === 'LIMIT_EXCEEDED' ? 'error' : 'invalid', error: problem.toJSON(), rubricate_version: rubricateVersion };
        }
      })) {
        await writer.write(line);
      }
    } catch (error) {
      await writer.discard();
      throw error;
    }
    await writer.close();
    session.finish();
  } finally {
    await session.close();
  }
  return failed > 0 ? exitCodes.itemsFailed : exitCodes.success;
}
