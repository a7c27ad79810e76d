/**
 * The CLI run inside the calling process with its output captured: what tests use when the
 * process itself is not under test (no start-up per run, and llama.cpp or Chromium load once).
 */
import type { CommandContext } from './context.js';
import { runCli } from './main.js';

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
