/**
 * A 300K-character trajectory graded through evidence mode against a loopback judge with a
 * 32k-token context that refuses longer requests exactly as OpenAI does (400,
 * context_length_exceeded). Tokens are counted with a real BPE tokenizer, not an estimate.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect } from 'vitest';
import { runCli } from '../cli/main.js';
import { exitCodes } from '../errors.js';
import type { FakeJudgeScript } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { hangGuard } from '../testing/hang-guard.js';

const contextTokens = 32_768;

function longTrajectory(): unknown[] {
  const messages: unknown[] = [{ role: 'user', content: 'Find me the cheapest flight from JFK to SEA in May and book it.' }];
  for (let day = 1; messages.length < 400; day += 1) {
    const id = `call_${day}`;
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'search_flights', arguments: JSON.stringify({ origin: 'JFK', destination: 'SEA', date: `2024-05-${String((day % 28) + 1).padStart(2, '0')}` }) } }] });
    const flights = Array.from({ length: 19 }, (_, index) => ({ flight_number: `HAT${String(day * 17 + index).padStart(3, '0')}`, departure: `${String(6 + (index % 14)).padStart(2, '0')}:00`, seats_left: (day * 7 + index * 3) % 9, price: 180 + ((day * 31 + index * 13) % 400) }));
    messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify(flights) });
  }
  messages.push({ role: 'assistant', content: 'The cheapest is HAT017 on May 2 at $181. Shall I book it (yes/no)?' });
  messages.push({ role: 'user', content: 'yes' });
  messages.push({ role: 'assistant', content: null, tool_calls: [{ id: 'book', type: 'function', function: { name: 'book_reservation', arguments: '{"flight_number":"HAT017","date":"2024-05-02"}' } }] });
  messages.push({ role: 'tool', tool_call_id: 'book', content: '{"reservation_id":"R1","status":"booked"}' });
  messages.push({ role: 'assistant', content: 'Booked: reservation R1.' });
  return messages;
}

/** A judge with a 32k context that refuses longer requests as OpenAI does; it records each prompt's tokens and each refusal in `measured`. */
function contextLimitedJudge(measured: { promptTokens: number[]; overflows: number }): FakeJudgeScript {
  return (request) => {
    const body = request.body as { max_tokens?: number; max_completion_tokens?: number };
    const inputTokens = request.messages.reduce((sum, message) => sum + countTokens(String(message.content)) + 4, 3);
    const requested = inputTokens + (body.max_completion_tokens ?? body.max_tokens ?? 0);
    measured.promptTokens.push(inputTokens);
    if (requested > contextTokens) {
      measured.overflows += 1;
      return {
        status: 400,
        body: { error: { message: `This model's maximum context length is ${contextTokens} tokens. However, you requested ${requested} tokens. Please reduce the length of the messages or completion.`, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } },
      };
    }
    const system = String(request.messages[0]?.content ?? '');
    if (system.includes('You help grade a long response')) {
      const excerpt = /<excerpt-[0-9a-f]+>\n([\s\S]*?)\n<\/excerpt-/.exec(request.userText)?.[1] ?? '';
      const evidence: Record<string, string[]> = {};
      for (const criterion of request.criteria) {
        const confirmation = /\[step \d+ #[0-9a-f]{12}\] user: yes/.exec(excerpt);
        evidence[criterion.id] = confirmation ? [confirmation[0]] : [];
      }
      return { content: { evidence } };
    }
    const confirmed = /\[step (\d+) #[0-9a-f]{12}\] user: yes/.exec(request.response ?? '');
    return { content: { explanation: confirmed ? `The user said yes at step ${confirmed[1]} before the booking.` : 'No confirmation found.', criteria_met: confirmed !== null } };
  };
}

describe('a 300K-character trajectory', () => {
  test('grades through evidence mode with no request over a 32k context', async ({ startJudge, tempDir }) => {
    const measured = { promptTokens: [] as number[], overflows: 0 };
    const { promptTokens } = measured;
    const fake = await startJudge(contextLimitedJudge(measured));
    const input = path.join(tempDir, 'long.jsonl');
    const item = { id: 'long', prompt: 'You are a travel agent. Confirm before booking.', response: longTrajectory(), rubric: { criteria: [{ id: 'confirm', text: 'Before the booking call, the agent obtains an explicit yes from the user. Cite the step.' }] } };
    await writeFile(input, `${JSON.stringify(item)}\n`);
    const out = path.join(tempDir, 'long.results.jsonl');
    const stderr: string[] = [];
    const code = await runCli(
      ['grade', '--input', input, '--out', out, '--judge', 'openai:judge', '--judge-base-url', fake.baseUrl, '--judge-api-key', 'test', '--context-budget', String(contextTokens), '--cache', path.join(tempDir, 'cache.sqlite')],
      { stdout: () => {}, stderr: (text) => stderr.push(text), signal: new AbortController().signal },
    );
    expect(stderr.join('\n')).toMatch(/1 ok, 0 error/);
    expect(code).toBe(exitCodes.success);
    const result = JSON.parse((await readFile(out, 'utf8')).trim());
    expect(result.response_chars).toBeGreaterThanOrEqual(300_000);
    expect(result.status).toBe('ok');
    const criterion = result.criteria[0];
    expect(criterion.met).toBe(true);
    expect(criterion.evidence.chunks).toBeGreaterThan(1);
    expect(criterion.evidence.quotes).toBe(1);
    // The verdict cites the confirmation step, and results keep it.
    const yesStep = Number(/\[step (\d+) #[0-9a-f]{12}\] user: yes/.exec(result.response)![1]);
    expect(criterion.steps).toEqual([yesStep]);
    // The criterion is judged on quotes under the trajectory's legend: a quote that only imitates a step header reads as text.
    const judged = fake.requests.filter((request) => !String(request.messages[0]?.content).includes('You help grade a long response'));
    expect(judged).toHaveLength(1);
    expect(judged[0].response).toMatch(new RegExp(`^\\[trajectory #${/^\[trajectory #([0-9a-f]{12})\]/.exec(result.response)![1]}\\] [^\\n]+\\n\\n\\[This response is`));
    expect(promptTokens.length).toBe(fake.requests.length);
    expect(fake.requests.length).toBeGreaterThan(criterion.evidence.chunks);
    expect(measured.overflows).toBe(0);
    expect(Math.max(...promptTokens)).toBeLessThanOrEqual(contextTokens);
    // Figures for the report: calls and the largest prompt against the context.
    console.info(`300K trajectory: ${result.response_chars} characters, ${fake.requests.length} judge calls, ${criterion.evidence.chunks} chunks, max prompt ${Math.max(...promptTokens)} tokens of ${contextTokens}`);
  }, hangGuard(120_000));
});
