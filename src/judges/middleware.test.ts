import { describe, expect, it } from 'vitest';
import { extendJudge, wrapJudge, type JudgeMiddleware } from './middleware.js';
import type { Judge, JudgeCapabilities, JudgeRequest } from './types.js';

/** A judge that answers with the text of its request's last message, and records what it was sent. */
function echoJudge(capabilities: JudgeCapabilities, events: string[]): Judge {
  return {
    provenance: { id: 'echo:m', model: 'm' },
    capabilities,
    async complete(request) {
      events.push(`inner ${request.messages.at(-1)!.content}`);
      return { text: request.messages.at(-1)!.content, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } };
    },
    async close() {
      events.push('inner closed');
    },
  };
}

const ask = (text: string): JudgeRequest => ({ messages: [{ role: 'user', content: text }] });
const signal = new AbortController().signal;

describe('wrapJudge', () => {
  it('runs the middlewares outermost first: each request rewritten on the way in, each reply on the way out', async () => {
    const events: string[] = [];
    const tag = (name: string): JudgeMiddleware => ({
      transformRequest: (request) => ({ ...request, messages: [{ role: 'user', content: `${request.messages[0].content}>${name}` }] }),
      async wrapComplete({ doComplete }) {
        events.push(`${name} before`);
        const reply = await doComplete();
        events.push(`${name} after`);
        return { ...reply, text: `${reply.text}<${name}` };
      },
    });
    const judge = wrapJudge(echoJudge({ images: false }, events), [tag('a'), tag('b')]);
    const reply = await judge.complete(ask('q'), { signal });
    expect(reply.text).toBe('q>a>b<b<a');
    expect(events).toEqual(['a before', 'b before', 'inner q>a>b', 'b after', 'a after']);
  });

  it("forwards the inner judge's provenance, and its capabilities whole and live, unless a middleware overrides them", () => {
    let images = false;
    const inner = echoJudge({ get images() { return images; } }, []);
    const plain = wrapJudge(inner, {});
    const single = wrapJudge(inner, { overrideCapabilities: (judge) => ({ ...judge.capabilities, maxConcurrency: 1 }), overrideProvenance: () => ({ id: 'pool:m', model: 'm' }) });
    images = true;
    expect(plain.provenance).toBe(inner.provenance);
    expect(plain.capabilities.images).toBe(true);
    expect(single.capabilities).toEqual({ images: false, maxConcurrency: 1 });
    expect(single.provenance.id).toBe('pool:m');
  });

  it('closes through wrapClose around the inner close, and always has a close', async () => {
    const events: string[] = [];
    const judge = wrapJudge(echoJudge({ images: false }, events), {
      async wrapClose(doClose) {
        events.push('outer closing');
        await doClose();
        events.push('outer closed');
      },
    });
    await judge.close();
    expect(events).toEqual(['outer closing', 'inner closed', 'outer closed']);
    const closeless: Judge = { provenance: { id: 'x:m', model: 'm' }, capabilities: { images: false }, complete: async () => ({ text: '', usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 } }) };
    await expect(wrapJudge(closeless, {}).close()).resolves.toBeUndefined();
  });

  it('extendJudge adds members and keeps a getter a getter', () => {
    let calls = 0;
    const judge = extendJudge(wrapJudge(echoJudge({ images: false }, []), {}), {
      get calls() {
        return calls;
      },
    });
    calls = 3;
    expect(judge.calls).toBe(3);
  });
});
