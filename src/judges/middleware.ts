/**
 * Judge middleware: the one way to build a judge around another (explanation lengths, dry runs,
 * batches, fleet limits, pools, the local-judge benchmark's timers). A wrapper says only what it
 * changes (the request, the call, the close, or what it reports as its provenance and
 * capabilities); everything else is the inner judge's, forwarded whole, so no wrapper can drop a
 * capability or a close. The shape is the AI SDK's `wrapLanguageModel`: `transformRequest` is its
 * `transformParams`, `wrapComplete` its `wrapGenerate`, the overrides its `overrideProvider`/`overrideModelId`.
 */
import type { CompleteOptions, Judge, JudgeCapabilities, JudgeProvenance, JudgeReply, JudgeRequest } from './types.js';

/** What `wrapComplete` is given: the call as the inner judge would get it, and the way to make it. */
export interface WrappedCall {
  /** The request after `transformRequest`. */
  request: JudgeRequest;
  options: CompleteOptions;
  /** Calls the inner judge with `request` (or another request, for a wrapper that rewrites it late). */
  doComplete(request?: JudgeRequest): Promise<JudgeReply>;
  /** The judge being wrapped. */
  judge: Judge;
}

export interface JudgeMiddleware {
  /** Rewrites each request before the call (and before `wrapComplete` sees it). */
  transformRequest?(request: JudgeRequest): JudgeRequest;
  /** Surrounds each call: time it, limit it, answer it another way; `doComplete` makes the inner call. */
  wrapComplete?(call: WrappedCall): Promise<JudgeReply>;
  /** Surrounds the close: `doClose` closes the inner judge (when it has a close). */
  wrapClose?(doClose: () => Promise<void>): Promise<void>;
  /** The provenance the wrapper reports, read once when it is built; default the inner judge's. */
  overrideProvenance?(judge: Judge): JudgeProvenance;
  /** The capabilities the wrapper reports, read once when it is built; default the inner judge's, read live. */
  overrideCapabilities?(judge: Judge): JudgeCapabilities;
}

/**
 * A judge that is `judge` with `middleware` around it. With several middlewares the first is the
 * outermost: it sees each request first and each reply last.
 *
 * @example
 * ```ts
 * import { createJudge, wrapJudge } from 'rubricate';
 * const judge = await createJudge({ model: 'openai:gpt-4.1-mini' });
 * const seconds: number[] = [];
 * const timed = wrapJudge(judge, {
 *   async wrapComplete({ doComplete }) {
 *     const started = performance.now();
 *     try {
 *       return await doComplete();
 *     } finally {
 *       seconds.push((performance.now() - started) / 1000);
 *     }
 *   },
 * });
 * ```
 */
export function wrapJudge(judge: Judge, middleware: JudgeMiddleware | readonly JudgeMiddleware[]): WrappedJudge {
  const layers: readonly JudgeMiddleware[] = Array.isArray(middleware) ? middleware : [middleware];
  if (layers.length === 0) return wrapOnce(judge, {});
  return layers.reduceRight<Judge>((inner, layer) => wrapOnce(inner, layer), judge) as WrappedJudge;
}

/** A wrapped judge: it always has a close (the inner judge's, when that has one, runs inside it). */
export type WrappedJudge = Judge & { close(): Promise<void> };

function wrapOnce(judge: Judge, middleware: JudgeMiddleware): WrappedJudge {
  const provenance = middleware.overrideProvenance ? middleware.overrideProvenance(judge) : judge.provenance;
  const capabilities = middleware.overrideCapabilities?.(judge);
  const doClose = async () => {
    await judge.close?.();
  };
  return {
    provenance,
    get capabilities() {
      return capabilities ?? judge.capabilities;
    },
    complete: (request, options) => completeThrough(judge, middleware, request, options),
    close: () => (middleware.wrapClose ? middleware.wrapClose(doClose) : doClose()),
  };
}

function completeThrough(judge: Judge, middleware: JudgeMiddleware, given: JudgeRequest, options: CompleteOptions): Promise<JudgeReply> {
  const request = middleware.transformRequest ? middleware.transformRequest(given) : given;
  const doComplete = (sent: JudgeRequest = request) => judge.complete(sent, options);
  return middleware.wrapComplete ? middleware.wrapComplete({ request, options, doComplete, judge }) : doComplete();
}

/**
 * `judge` with members of its own besides the judge's (a dry run's totals, a pool's status), each
 * kept as written: a getter stays a getter, read live.
 */
export function extendJudge<Base extends Judge, Extra extends object>(judge: Base, members: Extra): Base & Extra {
  return Object.defineProperties(judge, Object.getOwnPropertyDescriptors(members)) as Base & Extra;
}
