/**
 * The `rubricate` command line. Commands are registered from their own modules; errors
 * with a code become one clear message and a documented exit status (no stack traces
 * for user errors).
 */
import { Command, CommanderError, Option } from 'commander';
import { defaultInputLimits, inputEncodings, setInputLimits, type InputEncoding } from '../util/input-limits.js';
import { RubricateError, exitCodes, formatLocation } from '../errors.js';
import { rubricateVersion } from '../version.js';
import { redactText } from '../util/redact.js';
import type { CommandContext } from './context.js';
import { takeConfigFlag, withConfigFlags } from './config-file.js';

type Register = (program: Command, context: CommandContext) => void;

/**
 * Each command's module is loaded only when it runs (or for the full help): a user running
 * `grade` does not pay for the server, report or generation code and their dependencies.
 */
const commandModules: Record<string, () => Promise<Register>> = {
  eval: async () => (await import('./commands/eval.js')).registerEvalCommand,
  grade: async () => (await import('./commands/grade.js')).registerGradeCommand,
  init: async () => (await import('./commands/init.js')).registerInitCommand,
  rejudge: async () => (await import('./commands/rejudge.js')).registerRejudgeCommand,
  score: async () => (await import('./commands/score.js')).registerScoreCommand,
  serve: async () => (await import('./commands/serve.js')).registerServeCommand,
  convert: async () => (await import('./commands/convert.js')).registerConvertCommand,
  lint: async () => (await import('./commands/lint.js')).registerLintCommand,
  canary: async () => (await import('./commands/canary.js')).registerCanaryCommand,
  compare: async () => (await import('./commands/compare.js')).registerCompareCommand,
  meta: async () => (await import('./commands/meta.js')).registerMetaCommand,
  align: async () => (await import('./commands/align.js')).registerAlignCommand,
  probe: async () => (await import('./commands/probe.js')).registerProbeCommand,
  generate: async () => (await import('./commands/generate.js')).registerGenerateCommand,
  report: async () => (await import('./commands/report.js')).registerReportCommand,
  refine: async () => (await import('./commands/refine.js')).registerRefineCommand,
  cache: async () => (await import('./commands/cache.js')).registerCacheCommand,
  export: async () => (await import('./commands/export.js')).registerExportCommand,
  improve: async () => (await import('./commands/improve.js')).registerImproveCommand,
  worker: async () => (await import('./commands/worker.js')).registerWorkerCommand,
  merge: async () => (await import('./commands/merge.js')).registerMergeCommand,
  batches: async () => (await import('./commands/batches.js')).registerBatchesCommand,
  'fake-judge': async () => (await import('./commands/fake-judge.js')).registerFakeJudgeCommand,
  'bench-local': async () => (await import('./commands/bench-local.js')).registerBenchLocalCommand,
  view: async () => (await import('./commands/view.js')).registerViewCommand,
  benchmarks: async () => (await import('./commands/benchmarks.js')).registerBenchmarksCommand,
  calibrate: async () => (await import('./commands/calibrate.js')).registerCalibrateCommand,
  'calibrate-cascade': async () => (await import('./commands/calibrate-cascade.js')).registerCalibrateCascadeCommand,
  'rubric-reward': async () => (await import('./commands/rubric-reward.js')).registerRubricRewardCommand,
};

export async function buildProgram(context: CommandContext, argv: readonly string[] = []): Promise<Command> {
  const program = new Command();
  program
    .name('rubricate')
    .description('Rubric-based evaluation and rewards for LLM outputs')
    .version(rubricateVersion)
    .exitOverride()
    // Input limits apply to every command (before or after the command name).
    .addOption(new Option('--encoding <name>', 'text encoding of input files (invalid UTF-8 is an error naming the line)').choices([...inputEncodings]).default(defaultInputLimits.encoding))
    .option('--max-record-bytes <n>', 'largest input record (a JSONL line, a JSON file) in bytes', positiveInteger('max-record-bytes'), defaultInputLimits.maxRecordBytes)
    .option('--max-record-depth <n>', 'deepest nesting of objects and arrays in an input record', positiveInteger('max-record-depth'), defaultInputLimits.maxDepth)
    .hook('preAction', (root) => {
      const options = root.opts<{ encoding: InputEncoding; maxRecordBytes: number; maxRecordDepth: number }>();
      setInputLimits({ encoding: options.encoding, maxRecordBytes: options.maxRecordBytes, maxDepth: options.maxRecordDepth });
    })
    .configureOutput({ writeOut: (text) => context.stdout(text.replace(/\n$/, '')), writeErr: (text) => context.stderr(text.replace(/\n$/, '')) });
  const names = commandsToLoad(argv);
  for (const name of names) (await commandModules[name]())(program, context);
  for (const command of program.commands) command.exitOverride();
  return program;
}

/**
 * The command modules a command line needs: the one it names, none for a bare `--version` (no
 * command's code is loaded just to print a number), all of them for the full help.
 */
function commandsToLoad(argv: readonly string[]): string[] {
  const requested = argv.find((argument) => !argument.startsWith('-'));
  if (requested !== undefined && requested in commandModules) return [requested];
  const versionOnly = requested === undefined && argv.some((argument) => argument === '--version' || argument === '-V') && !argv.some((argument) => argument === '--help' || argument === '-h');
  return versionOnly ? [] : Object.keys(commandModules);
}

function positiveInteger(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1) throw new RubricateError('CONFIG_INVALID', `--${name} must be a positive integer, got "${value}"`, { field: name });
    return number;
  };
}

export async function runCli(argv: string[], context: Omit<CommandContext, 'exitCode'>): Promise<number> {
  // Each run starts from the default limits (several runs may share a process, as in tests).
  setInputLimits({});
  const full: CommandContext = { ...context, exitCode: exitCodes.success };
  try {
    // `--config FILE`: its settings become flags before the command line's own (which win).
    const { file, rest } = takeConfigFlag(argv);
    if (file !== undefined) full.configFile = file;
    const program = await buildProgram(full, rest);
    await program.parseAsync(withConfigFlags(program, rest, file), { from: 'user' });
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
    context.stderr(redactText(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
    context.stderr('this is a bug in rubricate: please report it with the command and this message');
    return exitCodes.internal;
  }
}

const isEntryPoint = process.argv[1] !== undefined && /(?:^|[\\/])(?:main\.[cm]?[jt]s|rubricate(?:\.js)?)$/.test(process.argv[1]);

if (isEntryPoint) {
  // The first SIGINT or SIGTERM asks the command to stop admitting work and save what it has
  // (it then exits 130 or 143); a second one exits at once. Replies are stored the moment they
  // arrive, so even that loses nothing paid for.
  const controller = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const exitCodeFor = (signal: NodeJS.Signals | undefined) => (signal === 'SIGTERM' ? exitCodes.terminated : exitCodes.interrupted);
  const onSignal = (signal: NodeJS.Signals) => {
    if (stoppedBy) {
      process.stderr.write(`\n${signal} again: exiting now; rerun the same command to resume\n`);
      process.exit(exitCodeFor(signal));
    }
    stoppedBy = signal;
    process.stderr.write(`\n${signal} received: stopping (in-flight judge calls get a few seconds to finish; press Ctrl-C again to exit at once)\n`);
    controller.abort(new RubricateError('DEADLINE_EXCEEDED', 'interrupted', { signal }));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let code = await runCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(`${text}\n`),
    stderr: (text) => process.stderr.write(`${text}\n`),
    signal: controller.signal,
  });
  if (code === exitCodes.interrupted) code = exitCodeFor(stoppedBy);
  process.exitCode = code;
}
