/**
 * The `rubricate` command line. Commands are registered from their own modules; errors
 * with a code become one clear message and a documented exit status (no stack traces
 * for user errors).
 */
import { Command, CommanderError } from 'commander';
import { RubricateError, exitCodes, formatLocation } from '../errors.js';
import { rubricateVersion } from '../version.js';
import { registerCompareCommand } from './commands/compare.js';
import { registerConvertCommand } from './commands/convert.js';
import { registerGenerateCommand } from './commands/generate.js';
import { registerGradeCommand } from './commands/grade.js';
import { registerMetaCommand } from './commands/meta.js';
import { registerProbeCommand } from './commands/probe.js';
import { registerReportCommand } from './commands/report.js';
import { registerRefineCommand } from './commands/refine.js';
import { registerScoreCommand } from './commands/score.js';
import { registerServeCommand } from './commands/serve.js';
import type { CommandContext } from './context.js';

export function buildProgram(context: CommandContext): Command {
  const program = new Command();
  program
    .name('rubricate')
    .description('Rubric-based evaluation and rewards for LLM outputs')
    .version(rubricateVersion)
    .exitOverride()
    .configureOutput({ writeOut: (text) => context.stdout(text.replace(/\n$/, '')), writeErr: (text) => context.stderr(text.replace(/\n$/, '')) });
  registerGradeCommand(program, context);
  registerScoreCommand(program, context);
  registerServeCommand(program, context);
  registerConvertCommand(program, context);
  registerCompareCommand(program, context);
  registerMetaCommand(program, context);
  registerProbeCommand(program, context);
  registerGenerateCommand(program, context);
  registerReportCommand(program, context);
  registerRefineCommand(program, context);
  for (const command of program.commands) command.exitOverride();
  return program;
}

export async function runCli(argv: string[], context: Omit<CommandContext, 'exitCode'>): Promise<number> {
  const full: CommandContext = { ...context, exitCode: exitCodes.success };
  const program = buildProgram(full);
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
