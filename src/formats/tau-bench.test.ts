import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { runCli } from '../cli/main.js';
import { exitCodes } from '../errors.js';
import { outcomeMeta } from '../meta/outcome.js';
import { kendallTauB, spearmanCorrelation } from '../statistics/correlation.js';
import { binaryVerdict, type FakeJudgeScript } from '../testing/fake-judge.js';
import { sharedData } from '../testing/shared-data.js';
import { test } from '../testing/vitest-fixtures.js';
import { tauBenchImporter } from './tau-bench.js';
import type { ImportRecord } from '../rubric/records.js';
import { captureOutput } from '../cli/in-process.js';
import { hangGuard } from '../testing/hang-guard.js';

const call = (id: string, name: string, args: unknown) => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });
const result = (id: string, name: string, content: string) => ({ role: 'tool', tool_call_id: id, name, content });
const cancel = { name: 'cancel_reservation', kwargs: { reservation_id: 'ABC123' } };

function record(taskId: number, trial: number, reward: number, traj: unknown[]) {
  return { task_id: taskId, trial, reward, info: { task: { user_id: 'u1', instruction: 'Cancel ABC123.', actions: [{ name: 'get_user_details', kwargs: { user_id: 'u1' } }, cancel], outputs: [] }, reward_info: { reward } }, traj: [{ role: 'system', content: '# Airline policy\nConfirm before writes.' }, ...traj] };
}

const good = record(0, 0, 1, [
  { role: 'user', content: 'Cancel ABC123 please.' },
  call('a', 'get_user_details', { user_id: 'u1' }),
  result('a', 'get_user_details', '{"reservations":["ABC123"]}'),
  { role: 'assistant', content: 'Cancel ABC123? (yes/no)' },
  { role: 'user', content: 'yes' },
  call('b', 'cancel_reservation', { reservation_id: 'ABC123' }),
  result('b', 'cancel_reservation', '{"status":"cancelled"}'),
  { role: 'assistant', content: 'Cancelled.' },
]);
// A failed call with wrong arguments, then an extra write: fails "no other write".
const extraWrite = record(0, 1, 0, [
  { role: 'user', content: 'Cancel ABC123 please.' },
  call('a', 'cancel_reservation', { reservation_id: 'ABC123', force: true }),
  result('a', 'cancel_reservation', 'Error: unexpected argument force'),
  call('b', 'cancel_reservation', { reservation_id: 'ABC123' }),
  result('b', 'cancel_reservation', '{"status":"cancelled"}'),
  call('c', 'send_certificate', { user_id: 'u1', amount: 50 }),
  result('c', 'send_certificate', 'Certificate added'),
]);
const badArguments = record(1, 0, 0, [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'cancel_reservation', arguments: '{"reservation_id": ' } }] }]);

/** A scripted judge: confirmation is met when the user said "yes" before the first write; the other policy criteria are met. */
const policyJudge: FakeJudgeScript = (request) => {
  const criterion = request.criteria[0];
  const response = request.response ?? '';
  const firstWrite = response.search(/tool call (book_reservation|cancel_reservation|update_reservation_\w+|send_certificate)\(/);
  const confirmed = /\[step \d+ #[0-9a-f]{12}\] user: yes/i.test(firstWrite < 0 ? response : response.slice(0, firstWrite));
  return { content: binaryVerdict(criterion?.id !== 'policy_confirmation' || confirmed) };
};

async function importAll(file: string): Promise<ImportRecord[]> {
  const records: ImportRecord[] = [];
  for await (const entry of tauBenchImporter.read(file, {})) records.push(entry);
  return records;
}


const readLinesOf = async (file: string) => (await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));

describe('--format tau-bench', () => {
  test('turns each trajectory into a hybrid item: write checks as hard rules, policy criteria, the reward as a label', async ({ tempDir }) => {
    const file = path.join(tempDir, 'small.json');
    await writeFile(file, JSON.stringify([good, extraWrite, badArguments]));
    const records = await importAll(file);
    expect(records.map((entry) => entry.kind)).toEqual(['item', 'item', 'invalid']);
    const item = (records[0] as Extract<ImportRecord, { kind: 'item' }>).item;
    expect(item.id).toBe('0-0');
    expect(item.prompt).toEqual([{ role: 'system', content: '# Airline policy\nConfirm before writes.' }]);
    expect(item.metadata).toMatchObject({ dataset: 'tau-bench', task_id: 0, trial: 0, outcome_reward: 1, outcome_evaluated: true });
    expect(item.rubric.gate).toBe('hard_rules');
    // Only the write (cancel_reservation) becomes an expected-write check; the read is not one.
    expect(item.rubric.criteria.map((criterion) => criterion.id)).toEqual(['expected_write_1', 'no_other_write', 'policy_confirmation', 'policy_grounded', 'policy_one_call', 'policy_transfer']);
    expect(item.rubric.criteria[0]).toMatchObject({ kind: 'hard_rule', check: { type: 'tool_args_match', name: 'cancel_reservation', args: { reservation_id: 'ABC123' } } });
    const marker = /^\[trajectory #([0-9a-f]{12})\]/.exec(item.response)![1];
    expect(item.response).toContain(`[step 2 #${marker}] tool call get_user_details({"user_id":"u1"})`);
    expect(item.response).toContain(`[step 7 #${marker}] tool result cancel_reservation: {"status":"cancelled"}`);
    expect(item.trajectory).toHaveLength(8);
    const invalid = records[2] as Extract<ImportRecord, { kind: 'invalid' }>;
    expect(invalid.error.code).toBe('INPUT_INVALID');
    expect(invalid.error.details).toMatchObject({ file, line: 3, field: 'traj[2].tool_calls[0].function.arguments' });
    expect(invalid.id).toBe('1-0');
  });

  test('refuses a "__proto__" key in an expected action\'s kwargs through the CLI, naming file, line and field; the other trajectory is graded', async ({ tempDir }) => {
    const file = path.join(tempDir, 'proto.json');
    const hostile = { ...good, task_id: 9, info: { ...good.info, task: { ...good.info.task, actions: [good.info.task.actions[0], { name: 'cancel_reservation', kwargs: { reservation_id: 'ABC123', PROTO: { force: true } } }] } } };
    // As the file is read (JSON.parse), "__proto__" is an own key; in an object literal it would set the prototype instead.
    const text = JSON.stringify([good, hostile]).replace('"PROTO"', '"__proto__"');
    expect(text.match(/"__proto__"/g)).toHaveLength(1);
    await writeFile(file, text);
    const before = await readFile(file, 'utf8');
    const out = path.join(tempDir, 'proto.results.jsonl');
    const { context, output } = captureOutput();
    const code = await runCli(['grade', '--format', 'tau-bench', '--input', file, '--judge', 'none', '--out', out, '--quiet'], context);
    expect(code, output.stderr.join('')).toBe(exitCodes.itemsFailed);
    const [first, second] = await readLinesOf(out);
    // --judge none leaves the policy criteria ungraded: the good trajectory is read and graded by its checks, not refused.
    expect(first.id).toBe('0-0');
    expect(first.status).not.toBe('invalid');
    expect(second).toMatchObject({ id: '9-0', status: 'invalid', error: { code: 'INPUT_INVALID', details: { file, line: 2, field: 'info.task.actions[1].kwargs.__proto__' } } });
    expect(await readFile(file, 'utf8')).toBe(before);
  });

  test('grades with --judge none: checks decide and the gate scores failed writes 0; meta reports the outcome agreement', async ({ tempDir }) => {
    const file = path.join(tempDir, 'small2.json');
    await writeFile(file, JSON.stringify([good, extraWrite]));
    const out = path.join(tempDir, 'small2.results.jsonl');
    const { context } = captureOutput();
    await runCli(['grade', '--format', 'tau-bench', '--input', file, '--judge', 'none', '--out', out, '--quiet'], context);
    const [first, second] = await readLinesOf(out);
    expect(first.criteria.filter((criterion: { source: string }) => criterion.source === 'check').map((criterion: { met: boolean }) => criterion.met)).toEqual([true, true]);
    expect(second.gated).toBe(true);
    expect(second.score).toBe(0);
    const noOther = second.criteria.find((criterion: { id: string }) => criterion.id === 'no_other_write');
    expect(noOther.met).toBe(false);
    expect(noOther.explanation).toContain('send_certificate@step 6');
    expect(noOther.steps).toEqual([4, 6]);
    const report = await outcomeMeta(out);
    expect(report.checks).toMatchObject({ items: 2, agreement: 1 });
    // The rank correlation of score and outcome, as the statistics compute it from the lines.
    const graded = (await readLinesOf(out)).filter((line) => line.status === 'ok' && typeof line.score === 'number');
    const outcomes = graded.map((line) => Number(line.metadata.outcome_reward > 0.5));
    expect(report.rankCorrelation).toEqual({ spearman: spearmanCorrelation(graded.map((line) => line.score), outcomes), kendallTauB: kendallTauB(graded.map((line) => line.score), outcomes) });
  });
});

describe('τ-bench airline trajectories (real data)', () => {
  const data = sharedData('tau_bench/gpt-4o-airline.json');
  test.skipIf(!data.available)('checks agree with the outcome reward on ≥ 90%; the hybrid rubric grades all 200 with a scripted judge, 0 errors; meta gives AUROC', async ({ startJudge, tempDir }) => {
    const checksOnly = path.join(tempDir, 'tau-none.jsonl');
    const { context } = captureOutput();
    await runCli(['grade', '--format', 'tau-bench', '--input', data.path, '--judge', 'none', '--out', checksOnly, '--quiet'], context);
    const none = await outcomeMeta(checksOnly);
    expect(none.items).toMatchObject({ withOutcome: 200, positive: 84, negative: 116 });
    expect(none.checks!.items).toBe(200);
    expect(none.checks!.agreement).toBeGreaterThanOrEqual(0.9);
    // The disagreements are τ-bench runs that ended in an error (reward_info null, reward 0 without a state comparison).
    const lines = await readLinesOf(checksOnly);
    expect(lines.filter((line) => line.metadata.outcome_evaluated === false)).toHaveLength(5);
    for (const id of none.checks!.checksPassedOutcomeFailed) expect(lines.find((line) => line.id === id).metadata.outcome_evaluated).toBe(false);

    const fake = await startJudge(policyJudge);
    const hybrid = path.join(tempDir, 'tau-hybrid.jsonl');
    const code = await runCli(
      ['grade', '--format', 'tau-bench', '--input', data.path, '--judge', 'openai:judge', '--judge-base-url', fake.baseUrl, '--judge-api-key', 'test', '--out', hybrid, '--cache', path.join(tempDir, 'cache.sqlite'), '--quiet'],
      context,
    );
    expect(code).toBe(exitCodes.success);
    const graded = await readLinesOf(hybrid);
    expect(graded).toHaveLength(200);
    expect(graded.filter((line) => line.status !== 'ok')).toEqual([]);
    const report = await outcomeMeta(hybrid);
    expect(report.items.scored).toBe(200);
    expect(report.auroc).toBeGreaterThan(0.5);
    expect(report.bestThreshold!.accuracy).toBeGreaterThanOrEqual(0.9);
    expect(report.rankCorrelation.kendallTauB).toBeGreaterThan(0);
    expect(report.criteria.map((row) => row.group)).toContain('tau:confirmation');
    console.info(`τ-bench: checks agreement ${none.checks!.agreement} (${none.checks!.checksPassedOutcomeFailed.join(', ')} passed but failed; ${none.checks!.checksFailedOutcomeSucceeded.join(', ')} failed but succeeded); hybrid AUROC ${report.auroc}, best threshold ${JSON.stringify(report.bestThreshold)}; ${JSON.stringify(report.criteria)}`);
    const metaOut = path.join(tempDir, 'meta.json');
    expect(await runCli(['meta', '--format', 'outcome', '--input', hybrid, '--out', metaOut, '--quiet'], context)).toBe(exitCodes.success);
    expect(JSON.parse(await readFile(metaOut, 'utf8')).auroc).toBe(report.auroc);
  }, hangGuard(120_000));
});
