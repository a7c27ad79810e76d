/**
 * Graceful interruption of commands that grade a stream. The first SIGINT/SIGTERM aborts the
 * command's signal: no new item is admitted and no new judge call starts. Calls already in
 * flight get a short grace period to land (their replies are stored as they arrive), then
 * they are cancelled. Nothing unfinished is written as an error and no final metrics are written.
 */
import { setMaxListeners } from 'node:events';
import type { Command } from 'commander';
import { exitCodes } from '../errors.js';
import type { CommandContext } from './context.js';
import { parseNumber } from './judge-options.js';

/** How long calls in flight may still finish after an interrupt, unless `--drain-timeout` says otherwise. */
export const interruptGraceMs = 5_000;

export interface DrainFlags {
  /** Seconds. */
  drainTimeout: number;
}

/**
 * `--drain-timeout`, named as `serve`'s: a reasoning judge's calls can take a minute, and a
 * replica under an orchestrator must fit its termination grace period.
 */
export function addDrainTimeoutOption(command: Command): Command {
  return command.option(
    '--drain-timeout <seconds>',
    'after a first Ctrl-C or SIGTERM, how long judge calls in flight may still land (their replies are kept) before they are cancelled',
    parseNumber('drain-timeout', 0),
    interruptGraceMs / 1000,
  );
}

/** The signal a command's in-flight calls listen on: aborts `--drain-timeout` after the stop signal. */
export function drainSignal(stop: AbortSignal, flags: DrainFlags): AbortSignal {
  return afterGrace(stop, Math.round(flags.drainTimeout * 1000));
}

/** A signal that aborts `graceMs` after `signal` does (at once if it already has). */
function afterGrace(signal: AbortSignal, graceMs: number): AbortSignal {
  const controller = new AbortController();
  // Every call in flight listens on it: that is concurrency listeners, not a leak.
  setMaxListeners(0, controller.signal);
  const start = () => {
    const timer = setTimeout(() => controller.abort(signal.reason), graceMs);
    timer.unref();
  };
  if (signal.aborted) start();
  else signal.addEventListener('abort', start, { once: true });
  return controller.signal;
}

/** Ends an interrupted run: says how far it got and how to resume; returns the exit code. */
export function reportInterrupted(context: CommandContext, done: number | undefined, total: number | undefined, noun = 'items'): number {
  const of = done !== undefined && total !== undefined && total >= done ? ` of ${total}` : '';
  context.stderr(`interrupted${done !== undefined ? ` after ${done}${of} ${noun}` : ''}; rerun the same command to resume (replies already received are saved and will not be paid for again)`);
  return exitCodes.interrupted;
}
