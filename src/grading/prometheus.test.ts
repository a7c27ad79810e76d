import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Grader } from '../pipeline/grader.js';
import { Comparer } from '../pipeline/compare.js';
import { biggenImporter } from '../formats/biggen.js';
import { normalizeItem } from '../rubric/normalize.js';
import { createJudge } from '../judges/registry.js';
import type { FakeJudgeScript } from '../testing/fake-judge.js';
import { sharedData } from '../testing/shared-data.js';
import { test } from '../testing/vitest-fixtures.js';
import { parsePrometheusAbsolute, parsePrometheusRelative, prometheusInstruction, renderScoreRubric, createPrometheusAbsoluteStrategy } from './prometheus.js';
import type { Item } from '../rubric/schema.js';

// Cases from prometheus-eval's own parser tests (libs/prometheus-eval/tests/test_parser.py), with
// the result the reference parser gives for each (None = rejected).
const referenceAbsolute: Array<[string, number | null]> = [
  ['Reference (Score 5) two results [RESULT] 3', 3],
  ['Reference (Score 5) not results', null],
  ['Excellent. [RESULT] 5 out of 5', 5],
  ['Poor performance. [RESULT] score of 1', 1],
  ['Good job. [Result] 3', 3],
  ['Needs improvement. [Result] Score: 2', 2],
  ['Well done. [Result] Result: 4', 4],
  ['Average. [Result] 4/5', 4],
  ['Good job. (Score 5)', 5],
  ['Good job. [Score 4]', 4],
  ['Good job. score: 3', 3],
  ['Good job. score of 1', 1],
  ['Good job. [RESULT] (5)', 5],
  ['The score is definitely not 3.', null],
  ['I rate this a perfect 10!', null],
  ['Score: 2.5', null],
  ['Result: A', null],
  ['', null],
];
const referenceRelative: Array<[string, 'A' | 'B' | null]> = [
  ['[Response B is not better. [RESULT] A', 'A'],
  ['Result A or B, not results', null],
  ['Response A is better. [RESULT] A', 'A'],
  ['Prefer Response B. [RESULT] B', 'B'],
  ['Feedback: Both responses are similar... [Response B]', 'B'],
  ['Feedback: Both responses are clear... [Result] Response B', 'B'],
  ['Feedback: Both responses are clear... Response B Response A', null],
  ['Feedback: Both responses are clear... [RESULT: B]', 'B'],
  ['Feedback: Both responses are clear... [Result: B]', 'B'],
  ['Feedback: Both responses are clear...Response A. [RESULT] B', 'B'],
  ['After careful consideration, I select Response B.', null],
  ['Both responses have their merits.', null],
  ['Response C is clearly superior.', null],
  ["The better response is obviously B... or is it A? It's hard to decide.", null],
  ['', null],
];
// Edge cases where Python's regex rules differ from JavaScript's defaults; expected values are
// what the reference parser (Python `re`) returns for each, run on these exact strings.
const pythonRuleAbsolute: Array<[string, number | null]> = [
  ['[RESULT] 5\n', 5], // `$` also matches before a final newline
  ['[RESULT] 6', null], // out of 1–5: rejected, no second search
  ['[RESULT] 0', null],
  ['[RESULT] \uff15', 5], // a full-width digit is a Unicode decimal digit: int() reads 5
  ['[RESULT] \u0663', 3], // Arabic-Indic three
  ['[RESULT] 3\u00a0', 3], // no-break space is whitespace in both
  ['[RESULT] 3\ufeff', null], // U+FEFF is whitespace for JavaScript, not for Python
  ['[RESULT] 3\x1c', 3], // U+001C is whitespace for Python, not for JavaScript
  ['[result] 05', 5],
  ['[RESULT] 3 extra', null], // anchored at the end
  ['Score: 3\n[RESULT] 4', 4],
  ['[RESULT] 4.', null],
  ['[RESULT] (4)/5', null],
  ['[RESULT] 4 /  5\n', null],
  ['score\n\nof 2', 2],
  ['[RESULT] 4\r', 4],
];
const pythonRuleRelative: Array<[string, 'A' | 'B' | null]> = [
  ['foo\rResult: A', null], // MULTILINE `^` follows only "\n", not "\r"
  ['x\u2028Result: A', null], // …nor U+2028
  ['foo\nResult: A', 'A'],
  ['[RESULT] a', 'A'],
  ['[RESULT] A\rfoo', null], // MULTILINE `$` precedes only "\n"
  ['[RESULT] A\nmore text', 'A'],
  ['[RESULT] AB', null],
  ['[RESULT] A\ufeff', null],
  ['[RESULT] A\x1f', 'A'],
];

describe('Prometheus reply parser (prometheus-eval parser.py)', () => {
  it.each([...referenceAbsolute, ...pythonRuleAbsolute])('absolute %j → %s', (output, expected) => {
    const parsed = parsePrometheusAbsolute(output);
    expect(parsed.ok ? parsed.result : null).toBe(expected);
  });
  it.each([...referenceRelative, ...pythonRuleRelative])('relative %j → %s', (output, expected) => {
    const parsed = parsePrometheusRelative(output);
    expect(parsed.ok ? parsed.result : null).toBe(expected);
  });
  it('keeps the feedback before the result', () => {
    const parsed = parsePrometheusAbsolute('The plan covers every must-have. [RESULT] 4');
    expect(parsed).toEqual({ ok: true, result: 4, feedback: 'The plan covers every must-have.' });
  });
});

const levels = ['misses two must-haves', 'all must-haves, unrealistic', 'realistic, no optional item', 'one optional item', 'everything'];
const biggenLike = normalizeItem({
  id: 'planning_trip_0',
  prompt: [
    { role: 'system', content: 'You are a travel agent.' },
    { role: 'user', content: 'Plan two days in Paris.' },
  ],
  response: 'Day 1: Louvre.',
  reference: 'Day 1: Louvre, Eiffel Tower.',
  rubric: {
    criteria: [
      { id: 'score_rubric', text: 'Does the plan include the must-haves?', scale: { type: 'ordinal', choices: levels.map((description, index) => ({ label: String(index + 1), description })) } },
    ],
  },
});

describe('Prometheus absolute layout', () => {
  it('renders instruction, response, reference answer and the [criteria] + Score 1–5 rubric as prometheus-eval does', () => {
    const [task] = createPrometheusAbsoluteStrategy({ sampling: { temperature: 0, maxTokens: 1024 } }).plan(biggenLike, biggenLike.rubric.criteria);
    const [system, user] = task.request.messages;
    expect(system).toEqual({
      role: 'system',
      content: 'You are a fair judge assistant tasked with providing clear, objective feedback based on specific criteria, ensuring each assessment reflects the absolute standards set for performance.',
    });
    // The expected text is prometheus-eval's ABSOLUTE_PROMPT filled by str.format with these values.
    expect(user.content).toBe(
      [
        '###Task Description:',
        'An instruction (might include an Input inside it), a response to evaluate, a reference answer that gets a score of 5, and a score rubric representing a evaluation criteria are given.',
        '1. Write a detailed feedback that assess the quality of the response strictly based on the given score rubric, not evaluating in general.',
        '2. After writing a feedback, write a score that is an integer between 1 and 5. You should refer to the score rubric.',
        '3. The output format should look as follows: "(write a feedback for criteria) [RESULT] (an integer number between 1 and 5)"',
        '4. Please do not generate any other opening, closing, and explanations.',
        '',
        '###The instruction to evaluate:',
        'Plan two days in Paris.',
        '',
        '###Response to evaluate:',
        'Day 1: Louvre.',
        '',
        '###Reference Answer (Score 5):',
        'Day 1: Louvre, Eiffel Tower.',
        '',
        '###Score Rubrics:',
        '[Does the plan include the must-haves?]',
        ...levels.map((description, index) => `Score ${index + 1}: ${description}`),
        '',
        '###Feedback: ',
      ].join('\n'),
    );
    // No structured output is asked for: Prometheus answers in free text.
    expect(task.request.output).toBeUndefined();
  });

  it('without a reference answer uses the layout without that section', () => {
    const { reference: _reference, ...withoutReference } = biggenLike;
    const [task] = createPrometheusAbsoluteStrategy({ sampling: { temperature: 0, maxTokens: 1024 } }).plan(withoutReference as Item, biggenLike.rubric.criteria);
    const content = task.request.messages[1].content;
    expect(content).toContain('a response to evaluate, and a score rubric representing a evaluation criteria are given.');
    expect(content).not.toContain('###Reference Answer');
    expect(content).toContain('###Response to evaluate:\nDay 1: Louvre.\n\n###Score Rubrics:\n[');
  });

  it('maps [RESULT] n to the nth level; a criterion without 1–5 levels is a configuration error', () => {
    const [task] = createPrometheusAbsoluteStrategy({ sampling: { temperature: 0, maxTokens: 1024 } }).plan(biggenLike, biggenLike.rubric.criteria);
    const decision = task.decide({ text: 'Only the Louvre. [RESULT] 2', finishReason: 'stop' } as never);
    expect(decision.verdicts.get('score_rubric')).toMatchObject({ label: '2', value: 0.25, met: false, explanation: 'Only the Louvre.' });
    const rejected = task.decide({ text: 'Pretty good overall, I would say a 4.', finishReason: 'stop' } as never);
    expect(rejected.errors.get('score_rubric')?.code).toBe('JUDGE_UNPARSEABLE');
    const binary = normalizeItem({ id: 'b', prompt: 'q', response: 'r', rubric: { criteria: [{ text: 'Is correct.' }] } });
    expect(() => createPrometheusAbsoluteStrategy({ sampling: { temperature: 0, maxTokens: 64 } }).plan(binary, binary.rubric.criteria)).toThrow(/exactly 5 levels/);
  });

  it('shows the judge a single user turn as the instruction, leaving the system prompt out (as BiGGen does)', () => {
    expect(prometheusInstruction(biggenLike)).toBe('Plan two days in Paris.');
    expect(renderScoreRubric('C', ['a', 'b'])).toBe('[C]\nScore 1: a\nScore 2: b');
  });
});

/** A script answering each call with `reply(prompt text, call number)`. */
function replying(reply: (userText: string, call: number) => string): FakeJudgeScript {
  let call = 0;
  return (request) => ({ content: reply(request.userText, call++) });
}

describe('Prometheus protocol through the engine (loopback judge)', () => {
  test('grades with [RESULT] replies; an unparseable reply is retried, then reported, never scored', async ({ startJudge }) => {
    const answering = await startJudge(replying((text, call) => (text.includes('Louvre.') && call < 1 ? 'I think it is fine.' : 'Covers the museum. [RESULT] 3')));
    const judge = await createJudge({ model: 'openai:prometheus-7b', endpoint: { baseUrl: answering.baseUrl } }, { apiKey: 'k' });
    const result = await new Grader({ judge, scoring: 'biggen', plan: { protocol: 'prometheus' }, calls: { maxAttempts: 3, retryBaseDelayMs: 1 } }).gradeItem({ ...biggenLike, tags: ['capability:planning'] });
    expect(result.status).toBe('ok');
    expect(result.criteria[0]).toMatchObject({ label: '3', status: 'ok' });
    expect(result.judge?.template_version).toBe('prometheus-absolute/v1');

    const silent = await startJudge(replying(() => 'No verdict here.'));
    const silentJudge = await createJudge({ model: 'openai:prometheus-7b', endpoint: { baseUrl: silent.baseUrl } }, { apiKey: 'k' });
    const failed = await new Grader({ judge: silentJudge, scoring: 'biggen', plan: { protocol: 'prometheus' }, calls: { maxAttempts: 2, retryBaseDelayMs: 1 } }).gradeItem(biggenLike);
    expect(failed.status).toBe('error');
    expect(failed.criteria[0].error?.code).toBe('JUDGE_UNPARSEABLE');
    expect(failed.score).toBeNull();
    expect(silent.requests.length).toBe(2);
  });

  test('relative: [RESULT] A|B in both orders, mapped back to the original labelling', async ({ startJudge }) => {
    // The judge always prefers the response mentioning "Eiffel", wherever it is shown.
    const fake = await startJudge(
      replying((text) => {
        const a = text.indexOf('###Response A:');
        const b = text.indexOf('###Response B:');
        return text.slice(a, b).includes('Eiffel') ? 'A covers more. [RESULT] A' : 'B covers more. [RESULT] B';
      }),
    );
    const judge = await createJudge({ model: 'openai:prometheus-7b', endpoint: { baseUrl: fake.baseUrl } }, { apiKey: 'k' });
    const comparer = new Comparer({ judge, plan: { protocol: 'prometheus' }, calls: { retryBaseDelayMs: 1 } });
    const record = await comparer.comparePair({ id: 'p', prompt: [{ role: 'user', content: 'Plan Paris.' }], responseA: 'Louvre only.', responseB: 'Louvre and Eiffel.' });
    expect(record.overall?.winner).toBe('B');
    expect(record.overall?.consistent).toBe(true);
    expect(fake.requests[0].messages[0].content).toContain('compares individual performances');
  });
});

const biggenData = sharedData('biggen_bench/sample_responses.json');
describe.skipIf(!biggenData.available)('BiGGen-Bench with a Prometheus judge (real instances)', () => {
  it('renders every instance in Prometheus layout and skips exactly the llm_judge instances, as run_response_eval.py does', async () => {
    const document = JSON.parse(readFileSync(biggenData.path, 'utf8')) as Record<string, { id: string; input: string; score_rubric: Record<string, string> }>;
    // The reference skips `"llm_judge" in record["id"]` when the judge is a Prometheus model.
    const expectedSkipped = Object.values(document).filter((record) => record.id.includes('llm_judge')).length;
    const { biggenSkipsWithPrometheus } = await import('../formats/biggen.js');
    const strategy = createPrometheusAbsoluteStrategy({ sampling: { temperature: 0, maxTokens: 1024 } });
    let skipped = 0;
    let rendered = 0;
    for await (const record of biggenImporter.read(biggenData.path, {})) {
      expect(record.kind).toBe('item');
      if (record.kind !== 'item') continue;
      if (biggenSkipsWithPrometheus(record.item.id)) {
        skipped += 1;
        continue;
      }
      const source = document[record.item.id];
      const [task] = strategy.plan(record.item, record.item.rubric.criteria);
      const content = task.request.messages[1].content;
      // SCORE_RUBRIC_TEMPLATE.format(**score_rubric), and the instance input as the instruction.
      const rubric = `[${source.score_rubric.criteria}]\n${[1, 2, 3, 4, 5].map((level) => `Score ${level}: ${source.score_rubric[`score${level}_description`]}`).join('\n')}`;
      expect(content).toContain(`###Score Rubrics:\n${rubric}\n\n###Feedback: `);
      expect(content).toContain(`###The instruction to evaluate:\n${source.input}\n\n###Response to evaluate:\n`);
      rendered += 1;
    }
    expect(skipped).toBe(expectedSkipped);
    expect(skipped).toBeGreaterThan(0);
    expect(rendered + skipped).toBe(Object.keys(document).length);
  });
});

describe('Prometheus replies with two different [RESULT] verdicts', () => {
  it('are refused in both protocols; the same verdict twice is read', () => {
    const absolute = parsePrometheusAbsolute('Feedback: adequate. [RESULT] 2\nOn reflection, better. [RESULT] 4');
    expect(absolute.ok ? absolute.result : absolute.reason).toBe('ambiguous reply: it gives [RESULT] 2 and [RESULT] 4');
    const relative = parsePrometheusRelative('A is better. [RESULT] A\nNo, B. [RESULT] B');
    expect(relative.ok ? relative.result : relative.reason).toBe('ambiguous reply: it gives [RESULT] A and [RESULT] B');
    const repeated = parsePrometheusAbsolute('[RESULT] 3 is my verdict, so: [RESULT] 3');
    expect(repeated.ok ? repeated.result : repeated.reason).toBe(3);
  });
});
