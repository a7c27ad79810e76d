/**
 * Graceful interruption of commands that grade a stream. The first SIGINT/SIGTERM aborts the
 * command's signal: no new item is admitted and no new judge call starts. Calls already in
 * flight get a short grace period to land (their replies are stored as they arrive), then
 * they are cancelled. Nothing unfinished is written as an error and no final metrics are written.
 */
import { setMaxListeners } from 'node:events';
import { exitCodes } from '../errors.js';
import type { CommandContext } from './context.js';

/** How long calls in flight may still finish after an interrupt. */
export const interruptGraceMs = 5_000;

/** A signal that aborts `graceMs` after `signal` does (at once if it already has). */
export function afterGrace(signal: AbortSignal, graceMs = interruptGraceMs): AbortSignal {
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
