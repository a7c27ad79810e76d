/**
 * `rubricate view DIR`: a local viewer over a folder of runs, on 127.0.0.1 only. Prints its
 * address, serves until Ctrl-C (or SIGTERM), then exits 0. See docs/report.md.
 */
import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { RubricateError, exitCodes } from '../../errors.js';
import type { CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { parsePort } from '../port-option.js';
import { runIndexPath, runIndexVariable } from '../../results/run-index.js';

interface ViewFlags {
  port?: number;
  runIndex?: string;
}

export function registerViewCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('view')
    .description('browse a folder of runs in the browser (on 127.0.0.1): an index with headline metrics, provenance and cost, any runs side by side, an item × run grid, and each run as its report')
    .argument('[folder]', 'folder holding results files (searched a few levels deep), compare files, meta-evaluation and probe reports; without it, every run of the run history, wherever its results are')
    .option('--port <n>', 'port on 127.0.0.1 (default 8011; 0 picks a free one)', parsePort)
    .option('--run-index <file>', `the run history to list and label runs from (default: ${runIndexVariable}, else the user's state folder)`);
  organizeHelp(command, ['rubricate view runs/', 'rubricate view --port 0   # every past run, on a free port, printed']);
  command.action(async (folder: string | undefined, flags: ViewFlags) => {
    context.exitCode = folder === undefined ? await runHistoryView(flags, context) : await runView(folder, flags, context);
  });
}

/** `rubricate view` with no folder: the runs of the run history, wherever their results are. */
async function runHistoryView(flags: ViewFlags, context: CommandContext): Promise<number> {
  const runIndex = runIndexPath(flags.runIndex);
  if (!runIndex) throw new RubricateError('CONFIG_INVALID', `the run history is off (${runIndexVariable}=off): give a folder, or --run-index FILE`, { field: 'run-index' });
  const { startViewer } = await import('../../report/viewer/server.js');
  const viewer = await startViewer({ runIndex, port: flags.port });
  context.stderr(`viewing the run history ${runIndex} at ${viewer.url} (loopback only; Ctrl-C stops)`);
  if (!existsSync(runIndex)) context.stderr(`the run history is empty so far: each grade adds its run to it (${runIndexVariable} or --run-index names another)`);
  return serveUntilStopped(viewer, context);
}

async function serveUntilStopped(viewer: { close(): Promise<void> }, context: CommandContext): Promise<number> {
  await new Promise<void>((resolve) => {
    if (context.signal.aborted) resolve();
    else context.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await viewer.close();
  return exitCodes.success;
}

async function runView(folder: string, flags: ViewFlags, context: CommandContext): Promise<number> {
  let isFolder: boolean;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch {
    throw new RubricateError('INPUT_UNREADABLE', 'cannot read the folder: no such file or folder', { file: folder, field: 'folder' });
  }
  if (!isFolder) throw new RubricateError('INPUT_UNREADABLE', 'not a folder: give the folder that holds the results files', { file: folder, field: 'folder' });
  const { startViewer } = await import('../../report/viewer/server.js');
  const viewer = await startViewer({ folder, port: flags.port, runIndex: runIndexPath(flags.runIndex) });
  context.stderr(`viewing ${folder} at ${viewer.url} (loopback only; Ctrl-C stops)`);
  await new Promise<void>((resolve) => {
    if (context.signal.aborted) resolve();
    else context.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await viewer.close();
  return exitCodes.success;
}
