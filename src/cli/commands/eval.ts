/**
 * `rubricate eval`: the main path from a model to a score. Each item's conversation is sent to
 * the model under test (`--model`), its answers become the responses, and they are graded as
 * `grade` grades them, in one pipeline (`runGrade` with sampling first): the same flags (built by
 * the same option builders), the same store, resume and results file, each line with its response
 * and where it came from (`sampled`).
 */
import type { Command } from 'commander';
import { itemImporters } from '../../formats/index.js';
import { addDryRunOption } from '../dry-run-options.js';
import { addJudgeOptions, parseNumber, parsePositiveInteger } from '../judge-options.js';
import { addBatchOptions } from '../batch-options.js';
import { addRunIndexOption } from '../run-index-options.js';
import { addLimitOption } from '../input-options.js';
import { addDrainTimeoutOption } from '../interrupt.js';
import { organizeHelp } from '../help.js';
import { quietHelp, type CommandContext } from '../context.js';
import { modelFromFlags, runSpecOf } from '../run-spec-flags.js';
import { addSamplingOptions } from '../sampling-options.js';
import { addConfigOption, resolvedConfigOf } from '../config-file.js';
import { evalEachModel } from '../eval-models.js';
import { runGrade, type GradeFlags } from './grade.js';
import { addBenchmarkOption, applyBenchmark } from '../benchmark-options.js';
import { RubricateError } from '../../errors.js';

export function registerEvalCommand(program: Command, context: CommandContext): void {
  const command = program.command('eval').description("sample the model under test on each item's conversation, then grade its responses against their rubrics (one result line per response)");
  command
    .option('--format <name>', `input format (${itemImporters.names().join(', ')}); the items' responses, if any, are replaced by the model's`, 'items')
    .option('--input <file>', 'input file: prompts (or conversations) with their rubrics (or --benchmark NAME)')
    .option('--rubrics <file>', 'rubrics (JSONL or JSON list, each with an id) for items that give rubric_id')
    .option('--examples <file>', 'examples file to take item tags from')
    .option('--image-root <dir>', "a folder image paths in items may name besides the input file's own (repeatable)", (dir: string, dirs: string[] = []) => [...dirs, dir])
    .option('--allow-private-image-urls', 'let image URLs in items reach loopback, private, link-local and other non-public addresses (a local image server)');
  addBenchmarkOption(command);
  addLimitOption(command);
  addSamplingOptions(command);
  command
    .option('--out <file>', 'results JSONL: one line per sampled response, with its provenance', 'results.jsonl')
    .option('--metrics <file>', 'write aggregate metrics JSON here (the model under test\'s usage and cost included)')
    .option('--strict', 'stop at the first invalid input record')
    .option('--prices <file>', 'price table (JSON/YAML {model: {input, cached_input, output}} in USD per 1M tokens)')
    .option('--report <file>', 'also write an HTML report at the end')
    .option('--repeats <n>', "grade every item n times (each repeat cached apart) and report how stable the verdicts and scores are; results keep the first repeat, with every repeat's verdicts and scores (on eval the judging repeats: each response is sampled once, --samples-per-prompt samples again)", parsePositiveInteger('repeats'))
    .option('--stability-threshold <score>', 'with --repeats: list the items whose score falls on both sides of this value across repeats', parseNumber('stability-threshold'))
    .option('--force', 'replace the default --out even when it holds the results of another run')
    .option('--canary <dir>', 'check the judge against the canary baseline pinned in DIR (rubricate canary --baseline DIR): warn when its settings differ at the start, or its replies name a model the baseline never saw at the end')
    .option('--quiet', quietHelp);
  addRunIndexOption(command);
  addJudgeOptions(command, ['plan', 'alignment', 'batching', 'sampling', 'protocol', 'template', 'calls', 'jury', 'cascade', 'guard', 'scoring', 'fleet', 'text', 'requests', 'limits']);
  addBatchOptions(command);
  addDryRunOption(command, 'send nothing: print the model under test\'s calls and the judge\'s calls, their tokens, the cache hits and the cost of each, apart');
  addDrainTimeoutOption(command);
  addConfigOption(command);
  organizeHelp(command, [
    'rubricate eval --input examples/items.jsonl --model openai:gpt-4.1-mini --judge openai:gpt-4.1 --out eval-results.jsonl --report eval-report.html',
    'rubricate eval --input examples/items.jsonl --model scripted --judge scripted --out eval-smoke.jsonl   # offline: made-up responses and verdicts',
  ]);
  command.options.find((option) => option.long === '--model')?.helpGroup('Model under test:');
  command.action(async (_given: GradeFlags, self: Command) => {
    // A pack sets the input, the format and the defaults the user left unset, before anything reads them.
    await applyBenchmark(self, context.stderr);
    const flags = self.opts<GradeFlags>();
    if (flags.input === undefined) throw new RubricateError('CONFIG_INVALID', 'give the prompts to sample: --input FILE, or --benchmark NAME (`rubricate benchmarks` lists them)', { field: 'input' });
    const spec = runSpecOf(self);
    const options = { outIsDefault: self.getOptionValueSource('out') === 'default', config: resolvedConfigOf(self, context.configFile) };
    const credentials = modelFromFlags(flags, 'model').credentials;
    // Several models: one run each, then their paired comparison.
    context.exitCode = spec.models.length > 1 ? await evalEachModel(flags, spec, context, { ...options, credentials }) : await runGrade(flags, spec, context, { ...options, sample: { credentials } });
  });
}

