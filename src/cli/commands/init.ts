/**
 * `rubricate init`: a commented starter config for one of the main jobs (`eval`, `grade`, `serve`),
 * to run with `rubricate JOB --config FILE`. Each starter runs as written, offline (the scripted
 * model and judge), and lists the settings a real run changes, commented out. It never replaces a
 * file.
 */
import { existsSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { RubricateError } from '../../errors.js';
import { writeFileAtomic } from '../../util/files.js';
import type { CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { configCommands, configSchemaPath } from '../config-schema.js';

type Job = (typeof configCommands)[number];

const header = (job: Job) => [
  `# rubricate ${job} --config FILE: each key is a long flag of \`rubricate ${job} --help\`; a flag typed on the command line wins.`,
  `# Editors check it against the schema: # yaml-language-server: $schema=./node_modules/rubricate/${configSchemaPath}`,
  '',
];

/** The starters: runnable offline as written; the commented lines are what a real run sets. */
const starters: Record<Job, readonly string[]> = {
  eval: [
    'input: examples/items.jsonl          # prompts (or conversations) with their rubrics',
    'model: scripted                     # the model under test: openai:MODEL, anthropic:MODEL, gemini:MODEL, gguf:PATH (scripted: made-up responses)',
    '# model-base-url: http://127.0.0.1:8000/v1   # an OpenAI-compatible server: vLLM, SGLang, llama.cpp, Ollama',
    '# model-temperature: 0.7',
    '# model-max-tokens: 2048',
    'samples-per-prompt: 1               # more for pass@k or GRPO-style groups',
    'judge: scripted                     # openai:gpt-4.1-mini, anthropic:MODEL, … (scripted: made-up verdicts)',
    'out: eval-results.jsonl',
    '# report: eval-report.html',
    '# concurrency: 16',
    '# batch: true                       # both models through their providers\' Batch APIs: half price, answers within 24 h (openai:, azure:, anthropic:)',
    '# prices: prices.yaml               # for the cost lines (USD per 1M tokens)',
  ],
  grade: [
    'input: examples/items.jsonl          # items with their responses and rubrics',
    '# format: healthbench',
    '# responses: responses.jsonl        # for formats that carry no responses',
    'judge: scripted                     # openai:gpt-4.1-mini, anthropic:MODEL, gguf:PATH, … (scripted: made-up verdicts)',
    '# judge-base-url: http://127.0.0.1:8000/v1',
    'out: grade-results.jsonl',
    '# report: grade-report.html',
    '# mode: batched',
    '# concurrency: 16',
  ],
  serve: [
    'judge: scripted                     # openai:gpt-4.1-mini, … (scripted: made-up rewards, to test a trainer\'s wiring)',
    'port: 8000',
    '# host: 127.0.0.1',
    '# token: set RUBRICATE_TOKEN in the environment rather than here',
    '# judge-base-url: http://127.0.0.1:8000/v1',
    '# concurrency: 64',
  ],
};

/** The starter config's text for a job. */
export function starterConfig(job: Job): string {
  return `${[...header(job), ...starters[job]].join('\n')}\n`;
}

export function registerInitCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('init')
    .description('write a commented starter config for eval, grade or serve (run it with rubricate JOB --config FILE); never replaces a file')
    .addOption(new Option('--for <job>', 'the job the config is for').choices([...configCommands]).default('eval'))
    .option('--out <file>', 'where to write it (default: rubricate-JOB.yaml)');
  organizeHelp(command, ['rubricate init   # rubricate-eval.yaml, then: rubricate eval --config rubricate-eval.yaml', 'rubricate init --for serve --out serve.yaml']);
  command.action(async (flags: { for: Job; out?: string }) => {
    const out = flags.out ?? `rubricate-${flags.for}.yaml`;
    if (existsSync(out)) throw new RubricateError('OUTPUT_CONFLICT', `${out} exists: init never replaces a file (remove it, or choose another --out)`, { field: 'out', file: out });
    await writeFileAtomic(out, starterConfig(flags.for));
    context.stderr(`wrote ${out}: run it with rubricate ${flags.for} --config ${out}`);
  });
}
