/**
 * `--run-index`: the run history a command that writes results adds its start and end lines to
 * (`results/run-index.ts`). One option text for every such command, so the config schema
 * describes them alike.
 */
import type { Command } from 'commander';
import { runIndexVariable } from '../results/run-index.js';

export function addRunIndexOption(command: Command): Command {
  return command.option('--run-index <file>', `the run history this run adds its lines to (default: ${runIndexVariable}, else the user's state folder; "off" for none)`);
}
