/**
 * Redis connections dropped on purpose while their server is gone (a lost queue, a store that no
 * longer answers): the commands still queued on them reject with ioredis's "Connection is closed.".
 * Some of those promises are BullMQ's own (its QueueEvents and Queue internals), which hold no
 * handler for them (BullMQ's issues #1228 and #1231 describe the same), and an unhandled rejection
 * would end the process with an internal error after the run has already reported the outage
 * (STORE_UNAVAILABLE). Once such a drop has happened, exactly that rejection is ignored; any other
 * stays fatal, as Node makes it by default.
 */
const droppedConnectionMessage = 'Connection is closed.';

let guarded = false;

/** Called where a Redis connection is dropped while its server is unreachable. */
export function noteDroppedRedisConnection(): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (reason) => {
    if (reason instanceof Error && reason.message === droppedConnectionMessage) return;
    throw reason;
  });
}
