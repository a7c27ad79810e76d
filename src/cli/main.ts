/**
 * The `rubricate` command line. Commands are registered from their own modules; errors
 * with a code become one clear message and a documented exit status (no stack traces
 * for user errors).
 */
import { Command, CommanderError } from 'commander';
import { RubricateError, exitCodes, formatLocation } from '../errors.js';
import { rubricateVersion } from '../version.js';
import type { CommandContext } from './context.js';

type Register = (program: Command, context: CommandContext) => void;

/**
 * Each command's module is loaded only when it runs (or for the full help): a user running
 * `grade` does not pay for the server, report or generation code and their dependencies.
 */
const commandModules: Record<string, () => Promise<Register>> = {
  grade: async () => (await import('./commands/grade.js')).registerGradeCommand,
  score: async () => (await import('./commands/score.js')).registerScoreCommand,
  serve: async () => (await import('./commands/serve.js')).registerServeCommand,
  convert: async () => (await import('./commands/convert.js')).registerConvertCommand,
  compare: async () => (await import('./commands/compare.js')).registerCompareCommand,
  meta: async () => (await import('./commands/meta.js')).registerMetaCommand,
  probe: async () => (await import('./commands/probe.js')).registerProbeCommand,
  generate: async () => (await import('./commands/generate.js')).registerGenerateCommand,
  report: async () => (await import('./commands/report.js')).registerReportCommand,
  refine: async () => (await import('./commands/refine.js')).registerRefineCommand,
  cache: async () => (await import('./commands/cache.js')).registerCacheCommand,
  worker: async () => (await import('./commands/worker.js')).registerWorkerCommand,
  merge: async () => (await import('./commands/merge.js')).registerMergeCommand,
  'bench-local': async () => (await import('./commands/bench-local.js')).registerBenchLocalCommand,
};

export async function buildProgram(context: CommandContext, argv: readonly string[] = []): Promise<Command> {
  const program = new Command();
  program
    .name('rubricate')
    .description('Rubric-based evaluation and rewards for LLM outputs')
    .version(rubricateVersion)
    .exitOverride()
    .configureOutput({ writeOut: (text) => context.stdout(text.replace(/\n$/, '')), writeErr: (text) => context.stderr(text.replace(/\n$/, '')) });
  const requested = argv.find((argument) => !argument.startsWith('-'));
  const names = requested !== undefined && requested in commandModules ? [requested] : Object.keys(commandModules);
  for (const name of names) (await commandModules[name]())(program, context);
  for (const command of program.commands) command.exitOverride();
  return program;
}

export async function runCli(argv: string[], context: Omit<CommandContext, 'exitCode'>): Promise<number> {
  const full: CommandContext = { ...context, exitCode: exitCodes.success };
  const program = await buildProgram(full, argv);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return full.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return error.exitCode === 0 ? exitCodes.success : exitCodes.usage;
    }
    if (RubricateError.isInstance(error)) {
      const location = formatLocation(error.details);
      context.stderr(`error [${error.code}]: ${location ? `${location}: ` : ''}${error.message}`);
      return error.exitCode;
    }
    context.stderr(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return exitCodes.internal;
  }
}

const isEntryPoint = process.argv[1] !== undefined && /(?:^|[\\/])(?:main\.[cm]?[jt]s|rubricate(?:\.js)?)$/.test(process.argv[1]);

if (isEntryPoint) {
  const controller = new AbortController();
  let interrupts = 0;
  process.on('SIGINT', () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(exitCodes.interrupted);
    controller.abort(new RubricateError('DEADLINE_EXCEEDED', 'interrupted'));
  });
  const code = await runCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(`${text}\n`),
    stderr: (text) => process.stderr.write(`${text}\n`),
    signal: controller.signal,
  });
  process.exitCode = code;
}
