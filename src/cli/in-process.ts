/**
 * The CLI run inside the calling process with its output captured: what tests use when the
 * process itself is not under test (no start-up per run, and llama.cpp or Chromium load once).
 */
import type { CommandContext } from './context.js';
import { CommanderError, type Command } from 'commander';
import { buildProgram, runCli } from './main.js';

export interface CapturedOutput {
  stdout: string[];
  stderr: string[];
}

/** A command context whose output lines are kept; `signal` never aborts unless a caller passes one. */
export function captureOutput(signal: AbortSignal = new AbortController().signal): { output: CapturedOutput; context: Omit<CommandContext, 'exitCode'> } {
  const output: CapturedOutput = { stdout: [], stderr: [] };
  return { output, context: { stdout: (text) => output.stdout.push(text), stderr: (text) => output.stderr.push(text), signal } };
}

/** Runs `rubricate ARGS…` in this process: the exit code and each stream's lines joined. */
export async function runCliCaptured(args: string[], signal?: AbortSignal): Promise<{ code: number; stdout: string; stderr: string }> {
  const { output, context } = captureOutput(signal);
  const code = await runCli(args, context);
  return { code, stdout: output.stdout.join('\n'), stderr: output.stderr.join('\n') };
}

/**
 * Whether `rubricate ARGS…` is a valid command line, without running it: every flag known to its
 * command, every value its parser and choices accept (commands whose documented examples need a
 * server, a cluster or a key are checked this way). The reason when it is not.
 */
export async function commandLineProblem(args: string[]): Promise<string | undefined> {
  const { output, context } = captureOutput();
  const program = await buildProgram({ ...context, exitCode: 0 }, args);
  const silence = (command: Command) => {
    if (command.commands.length > 0) command.commands.forEach(silence);
    else command.action(() => undefined);
  };
  program.commands.forEach(silence);
  try {
    await program.parseAsync(args, { from: 'user' });
    return undefined;
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return undefined;
    return [...output.stderr, error instanceof Error ? error.message : String(error)].join('\n');
  }
}
