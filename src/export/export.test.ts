/**
 * `rubricate export` end to end: results graded by a loopback judge become each training set,
 * checked against its consumer's documented row schema (TRL's dataset formats, OpenAI's chat and
 * preference fine-tuning lines); items in error are never exported; a verifier-distillation set
 * served back as a judge reproduces the verdicts it was built from.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { runCliCaptured } from '../cli/in-process.js';
import { binaryVerdict, type FakeJudgeRequest } from '../testing/fake-judge.js';
import { scriptedLabel } from '../util/made-up.js';
import { existsSync } from 'node:fs';
import { test } from '../testing/vitest-fixtures.js';

/** A chat message as TRL and OpenAI take it. */
const message = z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string() });
const assistantTurn = z.array(z.strictObject({ role: z.literal('assistant'), content: z.string() })).length(1);
/** TRL's conversational preference type: prompt messages, one assistant message each side. */
const trlPreference = z.strictObject({ prompt: z.array(message).min(1), chosen: assistantTurn, rejected: assistantTurn });
const trlStandard = z.strictObject({ prompt: z.string(), chosen: z.string(), rejected: z.string() });
/** TRL's unpaired preference type (KTO). */
const trlUnpaired = z.strictObject({ prompt: z.array(message).min(1), completion: assistantTurn, label: z.boolean() });
/** OpenAI's preference (DPO) fine-tuning line. */
const openaiPreference = z.strictObject({ input: z.strictObject({ messages: z.array(message).min(1) }), preferred_output: assistantTurn, non_preferred_output: assistantTurn });
/** OpenAI's chat fine-tuning line, which is also TRL's conversational language-modeling type; it ends with the assistant's turn. */
const chatExample = z.strictObject({ messages: z.array(message).min(2) }).refine((row) => row.messages.at(-1)!.role === 'assistant');

const readLines = (file: string) => readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);

/** Met when a hash of the criterion and the response says so: the same verdicts every time. */
const verdictOf = (request: FakeJudgeRequest) => createHash('sha256').update(`${request.criteria[0]?.text}\u0000${request.response}`).digest()[0] < 160;

/** Two prompts with four responses each (one of which the judge fails on), and one prompt with a single response. */
function writeItems(directory: string): string {
  const criteria = [
    { id: 'fever', text: 'Says 38°C is a low-grade fever', points: 5 },
    { id: 'fluids', text: 'Advises fluids', points: 2 },
    { id: 'aspirin', text: 'Recommends aspirin for a child', points: -4 },
  ];
  const lines: unknown[] = [];
  for (const prompt of ['Is 38°C a fever?', 'My child has 38°C, what now?']) {
    for (const [index, response] of ['Yes, mild; give fluids.', 'It is a fever. Aspirin helps.', 'No.', 'BROKEN reply'].entries()) {
      lines.push({ id: `${prompt.length}-${index}`, prompt, response, rubric: { criteria } });
    }
  }
  lines.push({ id: 'alone', prompt: 'A prompt with one response', response: 'Only one.', rubric: { criteria } });
  const file = join(directory, 'items.jsonl');
  writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  return file;
}

describe('rubricate export', () => {
  test('every training set from one graded run, in its consumer\'s schema; items in error are never exported', async ({ startJudge, tempDir }) => {
    const fake = await startJudge((request) => (request.response?.includes('BROKEN') ? { status: 500, body: { error: { message: 'down' } } } : { content: binaryVerdict(verdictOf(request)) }));
    const results = join(tempDir, 'results.jsonl');
    const graded = await runCliCaptured(['grade', '--input', writeItems(tempDir), '--out', results, '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet', '--max-attempts', '1']);
    expect(graded.code).toBe(3);
    const errored = readLines(results).filter((line) => line.status === 'error').map((line) => line.id);
    expect(errored).toHaveLength(2);
    const scores = new Map(readLines(results).map((line) => [line.id as string, line.score as number | null]));

    const run = (args: string[]) => runCliCaptured(['export', '--input', results, ...args]);
    const cases: Array<[string[], z.ZodType]> = [
      [['--kind', 'preference', '--format', 'trl', '--pairing', 'all'], trlPreference],
      [['--kind', 'preference', '--format', 'trl-standard', '--pairing', 'best-vs-each'], trlStandard],
      [['--kind', 'preference', '--format', 'trl-unpaired', '--pairing', 'all'], trlUnpaired],
      [['--kind', 'preference', '--format', 'openai'], openaiPreference],
      [['--kind', 'sft', '--format', 'messages', '--top-k', '1'], chatExample],
      [['--kind', 'distill', '--format', 'messages'], chatExample],
    ];
    for (const [args, schema] of cases) {
      const out = join(tempDir, `${args[1]}-${args[3]}.jsonl`);
      const result = await run([...args, '--out', out]);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      const rows = readLines(out);
      const rules = readLines(`${out}.rules.jsonl`);
      expect(rows.length, args.join(' ')).toBeGreaterThan(0);
      expect(rules).toHaveLength(rows.length);
      for (const row of rows) expect(schema.safeParse(row).success, `${args.join(' ')}: ${JSON.stringify(row)}`).toBe(true);
      // No row comes from an item in error, and the run says so.
      const cited = JSON.stringify(rules);
      for (const id of errored) expect(cited).not.toContain(`"id":"${id}"`);
      expect(result.stderr).toMatch(/item in error \(its score is not a measurement\) ×2/);
    }

    // Preference pairs: chosen strictly above rejected; best-vs-worst gives one pair per prompt with at least two scores.
    const pairs = readLines(join(tempDir, 'preference-openai.jsonl.rules.jsonl')) as Array<{ chosen: { id: string; score: number }; rejected: { id: string; score: number }; margin: number }>;
    for (const pair of pairs) {
      expect(pair.chosen.score).toBeGreaterThan(pair.rejected.score);
      expect(scores.get(pair.chosen.id)).toBe(pair.chosen.score);
    }
    expect(pairs.length).toBeLessThanOrEqual(2);
    // A margin no pair reaches leaves nothing: the command says so and exits 3.
    const tooWide = await run(['--kind', 'preference', '--min-margin', '2', '--out', join(tempDir, 'none.jsonl')]);
    expect(tooWide.code).toBe(3);
    expect(tooWide.stderr).toContain('closer than --min-margin 2');
    // SFT top 1: one per prompt (the lone prompt included), each its prompt's best.
    const sft = readLines(join(tempDir, 'sft-messages.jsonl.rules.jsonl')) as Array<{ id: string; score: number; rank: number }>;
    expect(sft).toHaveLength(3);
    expect(sft.every((rule) => rule.rank === 1)).toBe(true);
    // A setting of another kind is refused by name.
    const wrongKind = await run(['--kind', 'preference', '--top-k', '1', '--out', join(tempDir, 'x.jsonl')]);
    expect(wrongKind.code).toBe(2);
    expect(wrongKind.stderr).toContain('--top-k does not apply to --kind preference');
  });

  test('a verifier-distillation set served back as the judge reproduces the verdicts it was built from', async ({ startJudge, tempDir }) => {
    const fake = await startJudge((request) => (request.response?.includes('BROKEN') ? { status: 500, body: { error: { message: 'down' } } } : { content: binaryVerdict(verdictOf(request)) }));
    const items = writeItems(tempDir);
    const results = join(tempDir, 'results.jsonl');
    await runCliCaptured(['grade', '--input', items, '--out', results, '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet', '--max-attempts', '1']);
    const distilled = join(tempDir, 'distilled.jsonl');
    expect((await runCliCaptured(['export', '--kind', 'distill', '--input', results, '--out', distilled])).code).toBe(0);
    // The "distilled judge": answers a grading prompt with the assistant turn the set holds for it, and knows nothing else.
    const taught = new Map(readLines(distilled).map((row) => {
      const turns = row.messages as Array<{ role: string; content: string }>;
      return [`${turns[0].content}\u0000${turns[1].content}`, turns[2].content] as const;
    }));
    const served = await startJudge((request) => {
      const answer = taught.get(`${request.messages[0].content}\u0000${request.messages[1].content}`);
      return answer === undefined ? { status: 500, body: { error: { message: 'not in the distilled set' } } } : { content: answer };
    });
    const again = join(tempDir, 'again.jsonl');
    await runCliCaptured(['grade', '--input', items, '--out', again, '--judge', 'openai:distilled', '--judge-base-url', served.baseUrl, '--no-cache', '--quiet', '--max-attempts', '1']);
    const verdicts = (file: string) => readLines(file).filter((line) => line.status === 'ok').map((line) => [line.id, (line.criteria as Array<{ id: string; met: boolean }>).map((criterion) => `${criterion.id}=${criterion.met}`)]);
    expect(verdicts(again)).toEqual(verdicts(results));
    expect(verdicts(again).length).toBeGreaterThan(0);
  });

  test('distillation rows carry P(met), provenance and the human label; --target label teaches the labels', async ({ startJudge, tempDir }) => {
    const fake = await startJudge((request) => (request.response?.includes('BROKEN') ? { status: 500, body: { error: { message: 'down' } } } : { content: binaryVerdict(verdictOf(request)) }));
    const results = join(tempDir, 'results.jsonl');
    await runCliCaptured(['grade', '--input', writeItems(tempDir), '--out', results, '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet', '--max-attempts', '1']);
    const firstOk = readLines(results).find((line) => line.status === 'ok')!;
    const labels = join(tempDir, 'labels.jsonl');
    writeFileSync(labels, `${JSON.stringify({ id: firstOk.id, criterion_id: 'fever', label: true })}\n`);
    const table = join(tempDir, 'table.jsonl');
    expect((await runCliCaptured(['export', '--kind', 'distill', '--format', 'table', '--input', results, '--labels', labels, '--out', table])).code).toBe(0);
    const rows = readLines(table);
    const labelled = rows.find((row) => row.item_id === firstOk.id && row.criterion_id === 'fever')!;
    expect(labelled).toMatchObject({ label: true, judge: { id: 'openai:m', model: 'm' }, criterion: 'Says 38°C is a low-grade fever' });
    expect(typeof labelled.met).toBe('boolean');
    const byLabel = join(tempDir, 'by-label.jsonl');
    const result = await runCliCaptured(['export', '--kind', 'distill', '--target', 'label', '--input', results, '--labels', labels, '--out', byLabel]);
    expect(result.code).toBe(0);
    expect(readLines(byLabel)).toHaveLength(1);
    expect(result.stderr).toMatch(/no human label \(or a tied one\) for --target label ×\d+/);
  });

  test('augmentation pairs from probe variants: ordered pairs as preference rows, equal pairs only in the table', async ({ startJudge, tempDir }) => {
    const fake = await startJudge((request) => ({ content: binaryVerdict(verdictOf(request)) }));
    const items = join(tempDir, 'items.jsonl');
    writeFileSync(items, `${JSON.stringify({ id: 'q', prompt: 'Is 38°C a fever?', response: 'Yes, it is a low-grade fever. Drink plenty of fluids and rest.', rubric: { criteria: [{ id: 'fever', text: 'Says 38°C is a low-grade fever', points: 5 }, { id: 'fluids', text: 'Advises drinking fluids', points: 2 }] } })}\n`);
    const variants = join(tempDir, 'variants.jsonl');
    const probe = await runCliCaptured(['probe', '--input', items, '--out', join(tempDir, 'probe.json'), '--variants-out', variants, '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet', '--bootstrap-resamples', '0']);
    expect(probe.code, probe.stderr).not.toBe(2);
    const table = join(tempDir, 'augment.jsonl');
    expect((await runCliCaptured(['export', '--kind', 'augment', '--input', variants, '--out', table])).code).toBe(0);
    const rows = readLines(table) as Array<{ relation: string; perturbation: string; response_a: string; response_b: string; judge_agreed: boolean }>;
    expect(rows.some((row) => row.relation === 'equal')).toBe(true);
    expect(rows.every((row) => row.response_a !== row.response_b)).toBe(true);
    const preference = join(tempDir, 'augment-trl.jsonl');
    const trl = await runCliCaptured(['export', '--kind', 'augment', '--format', 'trl', '--input', variants, '--out', preference]);
    const ordered = rows.filter((row) => row.relation === 'original_better').length;
    if (ordered > 0) {
      expect(trl.code).toBe(0);
      const preferenceRows = readLines(preference);
      expect(preferenceRows).toHaveLength(ordered);
      for (const row of preferenceRows) expect(trlPreference.safeParse(row).success).toBe(true);
    }
    expect(trl.stderr).toMatch(/an equal pair has no preference form/);
  });

  test('made-up verdicts are refused as training data unless --allow-scripted, which marks each row', async ({ startJudge, tempDir }) => {
    const items = writeItems(tempDir);
    // The scripted judge by name, and a fake-judge run (an openai: provenance, scripted explanations).
    const scripted = join(tempDir, 'scripted.jsonl');
    expect((await runCliCaptured(['grade', '--input', items, '--out', scripted, '--judge', 'scripted:mixed', '--no-cache', '--quiet'])).code).toBe(0);
    const fake = await startJudge((request) => ({ content: JSON.stringify({ explanation: scriptedLabel, criteria_met: verdictOf(request) }) }));
    const faked = join(tempDir, 'faked.jsonl');
    await runCliCaptured(['grade', '--input', items, '--out', faked, '--judge', 'openai:gpt-4.1-mini', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    for (const [results, judge] of [[scripted, 'scripted:mixed'], [faked, 'fake-judge']] as const) {
      const out = join(tempDir, `refused-${judge}.jsonl`);
      const refused = await runCliCaptured(['export', '--kind', 'sft', '--input', results, '--out', out]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('[SCRIPTED_VERDICTS_REFUSED]');
      expect(refused.stderr).toContain(`${results}:1`);
      expect(refused.stderr).toContain(judge);
      expect(existsSync(out)).toBe(false);
      const allowed = join(tempDir, `allowed-${judge}.jsonl`);
      const exported = await runCliCaptured(['export', '--kind', 'preference', '--pairing', 'all', '--input', results, '--out', allowed, '--allow-scripted']);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stderr.split('\n')[0]).toMatch(/^made up: .* row\(s\) are built from made-up verdicts/);
      const rows = readLines(allowed);
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row.scripted).toBe(true);
      for (const rule of readLines(`${allowed}.rules.jsonl`)) expect(rule.scripted).toBe(true);
    }
  });
});
