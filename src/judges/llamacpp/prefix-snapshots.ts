/**
 * Evaluated prompt prefixes shared between the sequences of one context. The criteria of one
 * item share a long prefix (instructions, conversation, response); with several sequences,
 * each would evaluate that prefix again. node-llama-cpp cannot copy KV cells from one
 * sequence to another, but it can save a sequence's state to a file and load it into another:
 * for an item's 900 tokens that is tens of milliseconds against many seconds of prefill, and
 * the cells loaded are the very values the donor computed.
 *
 * So the first call of a prefix evaluates it (without the prompt's last token), saves the
 * state, and then goes on; calls on other sequences that share at least `minSharedTokens` more
 * tokens with it than their own sequence holds wait for that file and load it instead of
 * evaluating. Files live in a private temporary folder, a bounded number at a time, and are
 * removed on close.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

type LlamaContextSequence = import('node-llama-cpp').LlamaContextSequence;
type Token = import('node-llama-cpp').Token;

interface Snapshot {
  /** The tokens whose state the file holds: the publishing prompt without its last token. */
  readonly tokens: readonly Token[];
  readonly file: string;
  /** True once the file is written; false when the publishing call failed before that. */
  readonly ready: Promise<boolean>;
  settle(saved: boolean): void;
  settled: boolean;
  /** Calls waiting for or loading this file (it is not removed while any are). */
  users: number;
}

/** What a call does about shared prefixes before it decodes. */
export interface PrefixPlan {
  /** Prompt tokens loaded from another sequence's snapshot (0 when none). */
  copiedTokens: number;
  /** Set when this call evaluates a long new prefix others may share: saves it once evaluated. */
  publish?: (sequence: LlamaContextSequence) => Promise<void>;
  /** Tells waiters the prefix will not come (the call failed before publishing). */
  abandon(): void;
}

/** Tokens two lists share from the start, at most `limit`. */
export function sharedPrefixLength(left: readonly number[], right: readonly number[], limit = Number.POSITIVE_INFINITY): number {
  const bound = Math.min(left.length, right.length, limit);
  let shared = 0;
  while (shared < bound && left[shared] === right[shared]) shared += 1;
  return shared;
}

export class PrefixSnapshots {
  private readonly snapshots: Snapshot[] = [];
  private directory: string | undefined;
  private written = 0;
  private closed = false;

  constructor(private readonly options: { minSharedTokens: number; maxSnapshots: number }) {}

  /**
   * Before a call on `sequence`: loads a longer shared prefix when another sequence saved (or is
   * saving) one; otherwise, when the call will evaluate a long new prefix, offers to publish it.
   */
  async prepare(sequence: LlamaContextSequence, promptTokens: readonly Token[], signal?: AbortSignal): Promise<PrefixPlan> {
    const limit = promptTokens.length - 1;
    const own = sharedPrefixLength(sequence.contextTokens, promptTokens, limit);
    const donor = this.longestShared(promptTokens, limit);
    if (donor && donor.shared - own >= this.options.minSharedTokens && (await this.load(donor.snapshot, sequence, signal))) {
      return { copiedTokens: donor.shared, abandon: () => undefined };
    }
    if (this.closed || signal?.aborted || limit - own < this.options.minSharedTokens) return { copiedTokens: 0, abandon: () => undefined };
    const snapshot = this.add(promptTokens.slice(0, limit));
    return {
      copiedTokens: 0,
      publish: async (published) => {
        try {
          await published.saveStateToFile(snapshot.file);
          snapshot.settle(true);
        } catch {
          // Only a lost shortcut: the waiters evaluate the prefix themselves.
          snapshot.settle(false);
        }
      },
      abandon: () => snapshot.settle(false),
    };
  }

  /** Removes every file; waiters still pending evaluate for themselves. */
  close(): void {
    this.closed = true;
    for (const snapshot of this.snapshots) snapshot.settle(false);
    this.snapshots.length = 0;
    if (this.directory) rmSync(this.directory, { recursive: true, force: true });
    this.directory = undefined;
  }

  private longestShared(promptTokens: readonly Token[], limit: number): { snapshot: Snapshot; shared: number } | undefined {
    let best: { snapshot: Snapshot; shared: number } | undefined;
    for (const snapshot of this.snapshots) {
      const shared = sharedPrefixLength(snapshot.tokens, promptTokens, limit);
      if (!best || shared > best.shared) best = { snapshot, shared };
    }
    return best;
  }

  private async load(snapshot: Snapshot, sequence: LlamaContextSequence, signal: AbortSignal | undefined): Promise<boolean> {
    snapshot.users += 1;
    try {
      // A call that times out while the prefix is still being evaluated stops waiting at once.
      if (!(await untilAborted(snapshot.ready, signal)) || this.closed || signal?.aborted) return false;
      // Written by this process from this model a moment ago, in a folder only it can write.
      await sequence.loadStateFromFile(snapshot.file, { acceptRisk: true });
      return true;
    } catch {
      return false;
    } finally {
      snapshot.users -= 1;
    }
  }

  private add(tokens: readonly Token[]): Snapshot {
    this.directory ??= mkdtempSync(path.join(os.tmpdir(), 'rubricate-kv-'));
    this.written += 1;
    let settle: (saved: boolean) => void = () => undefined;
    const ready = new Promise<boolean>((resolve) => (settle = resolve));
    const snapshot: Snapshot = {
      tokens,
      file: path.join(this.directory, `prefix-${this.written}.state`),
      ready,
      settled: false,
      users: 0,
      settle(saved) {
        if (snapshot.settled) return;
        snapshot.settled = true;
        settle(saved);
      },
    };
    this.snapshots.push(snapshot);
    this.evict();
    return snapshot;
  }

  /** Drops the oldest files beyond the bound that nobody waits for or loads. */
  private evict(): void {
    for (let index = 0; this.snapshots.length > this.options.maxSnapshots && index < this.snapshots.length; ) {
      const snapshot = this.snapshots[index];
      if (snapshot.settled && snapshot.users === 0) {
        this.snapshots.splice(index, 1);
        rmSync(snapshot.file, { force: true });
      } else index += 1;
    }
  }
}

/** `ready`, or false as soon as `signal` aborts. */
function untilAborted(ready: Promise<boolean>, signal: AbortSignal | undefined): Promise<boolean> {
  if (!signal) return ready;
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    void ready.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}
