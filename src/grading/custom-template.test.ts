/**
 * `--judge-template`: the file replaces the grading prompt (system and user messages, variables
 * filled, the item's texts fenced), changes the cache key and the provenance, and a template
 * missing a required variable (or naming an unknown one) fails before any call, in the library,
 * the CLI and serve alike.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import type { JudgeReply } from '../judges/types.js';
import { Grader } from '../pipeline/grader.js';
import { normalizeItem } from '../rubric/normalize.js';
import { startTestServer } from '../server/test-support.js';
import type { ReplyStore } from '../store/types.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { sha256Hex } from '../util/hash.js';
import { parseJudgeTemplate } from './custom-template.js';

const template = `--- system ---
You are a strict clinical grader.
--- user ---
Earlier conversation:
{{conversation}}

Answer to grade:
{{response}}

{{reference}}
Criterion: {{ criterion }}
Answer with {{verdict_format}} only.`;

const item = normalizeItem({ id: 'q1', prompt: 'Is 38°C a fever?', response: 'Yes, a mild one.', reference: 'A low-grade fever.', rubric: { criteria: [{ id: 'fever', text: 'Says it is a low-grade fever', points: 2 }] } });

/** A store that remembers the keys it was asked for. */
function keyRecorder(): ReplyStore & { keys: string[] } {
  const replies = new Map<string, JudgeReply>();
  const keys: string[] = [];
  return { keys, get: (key) => (keys.push(key), replies.get(key)), put: (key, reply) => void replies.set(key, reply), close: () => undefined };
}

describe('judge templates', () => {
  test('the template is the prompt: its system and user messages, variables filled, texts in their fenced blocks', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }));
    const result = await new Grader({ judge, plan: { template } }).gradeItem(item);
    const [request] = fake.requests;
    expect(request.messages[0]).toEqual({ role: 'system', content: 'You are a strict clinical grader.' });
    const user = request.messages[1].content;
    expect(user).toMatch(/^Earlier conversation:\n<conversation-[0-9a-f]{16}>\nuser: Is 38°C a fever\?\n<\/conversation-[0-9a-f]{16}>/);
    expect(user).toContain('<response-');
    expect(user).toMatch(/<reference-[0-9a-f]{16}>\nA low-grade fever\.\n/);
    expect(request.criteria).toEqual([{ id: 'fever', points: 2, text: 'Says it is a low-grade fever' }]);
    expect(user).toContain('Answer with {"explanation": "<one to three sentences>", "criteria_met": <true or false>} only.');
    // The reply schema and the reading of the reply are rubricate's own.
    expect(request.body.response_format).toMatchObject({ type: 'json_schema' });
    expect(result.criteria[0].met).toBe(true);
    expect(result.judge).toMatchObject({ template_version: `template:${sha256Hex(template).slice(0, 12)}`, template_sha256: sha256Hex(template) });
  });

  test('a template changes the cache key, and so does any change to it', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }));
    const keysOf = async (plan: { template?: string }) => {
      const store = keyRecorder();
      await new Grader({ judge, store, plan }).gradeItem(item);
      return store.keys;
    };
    const native = await keysOf({});
    const custom = await keysOf({ template });
    const edited = await keysOf({ template: `${template}\nBe brief.` });
    expect(new Set([...native, ...custom, ...edited]).size).toBe(3);
    expect(await keysOf({ template })).toEqual(custom);
  });

  test('a template without a required variable, or with an unknown one, is refused before any call', async ({ scriptedJudge }) => {
    expect(() => parseJudgeTemplate('Grade {{response}} carefully.')).toThrow(/must show the judge \{\{criterion\}\}/);
    expect(() => parseJudgeTemplate('{{response}} {{criterion}} {{rubric}}')).toThrow(/unknown variable \{\{rubric\}\}/);
    expect(() => parseJudgeTemplate('{{response}} {{criterion}} {{reference')).toThrow(/does not close/);
    expect(() => parseJudgeTemplate('--- system ---\n{{response}}\n--- user ---\n{{criterion}} {{response}}')).toThrow(/user message, not the system message/);
    const { fake, judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }));
    expect(() => new Grader({ judge, plan: { template: 'Grade {{response}}.' } })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => new Grader({ judge, plan: { template, criteriaPerCall: 'all' } })).toThrow(/--judge-template replaces the per-criterion prompt/);
    expect(fake.requests).toHaveLength(0);
  });

  test('the CLI and serve read --judge-template and refuse a bad one with exit 2 before any call', async ({ startJudge, tempDir, closeAfter }) => {
    const fake = await startJudge(() => ({ content: binaryVerdict(true) }));
    const good = join(tempDir, 'good.txt');
    const bad = join(tempDir, 'bad.txt');
    writeFileSync(good, template);
    writeFileSync(bad, 'Grade {{response}} please.');
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, `${JSON.stringify({ id: 'q1', prompt: 'Is 38°C a fever?', response: 'Yes.', rubric: { criteria: [{ text: 'Says it is a fever' }] } })}\n`);
    const grade = (file: string) => runCliCaptured(['grade', '--input', input, '--out', join(tempDir, 'out.jsonl'), '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet', '--judge-template', file]);
    const refused = await grade(bad);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/CONFIG_INVALID.*--judge-template: the template must show the judge \{\{criterion\}\}/);
    const served = await runCliCaptured(['serve', '--port', '0', '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--judge-template', bad]);
    expect(served.code).toBe(2);
    expect(fake.requests).toHaveLength(0);
    expect((await grade(good)).code).toBe(0);
    expect(fake.requests[0].messages[0].content).toBe('You are a strict clinical grader.');
    // The reward server grades with the template given in its grading options.
    const server = closeAfter(await startTestServer({ service: { grading: { plan: { template } } } }));
    const answer = await (await server.post('/v1/score', { prompt: 'Is 38°C a fever?', response: 'Yes, mild.', rubric: { criteria: [{ text: 'mentions mild' }] } })).json();
    expect(answer.status).toBe('ok');
    expect(server.fake.requests[0].messages[1].content).toMatch(/^Earlier conversation:/);
  });
});
