/**
 * No secret reaches any output. A judge base URL carries a password and an `?api_key=`, the API
 * key is echoed back by the judge in error bodies (a 400, then a 401), and the server has a
 * token. Every output is then searched for every planted secret: the results file, the metrics
 * file, the HTML and Markdown reports, stdout and stderr of `grade` and `report`, and for
 * `serve`: /healthz with and without the token, /metrics, error answers and the request log.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { binaryVerdict, startFakeJudge, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { safeParseJson } from '../src/util/json.js';
import { cliPath, runCli } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const urlPassword = 'urlpass-7f3a9c21';
const querySecret = 'querysecret-51d2e0aa';
const apiKey = 'apikey-echo-9b8c7d6e55';
const serverToken = 'servetoken-4242aa77';
const planted = [urlPassword, querySecret, apiKey, serverToken];


function secretUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `http://judgeuser:${urlPassword}@${url.host}${url.pathname}?api_key=${querySecret}`;
}

/** The key the client sent, echoed the way careless servers do. */
function echo(request: FakeJudgeRequest): string {
  return `invalid key ${String(request.headers.authorization ?? '')} (key=${apiKey}) for ${request.path}`;
}

function expectClean(label: string, text: string): void {
  for (const secret of planted) expect(text.includes(secret), `${label} contains ${secret}`).toBe(false);
}

function itemsFile(directory: string): string {
  const file = join(directory, 'items.jsonl');
  const rubric = { criteria: [{ id: 'ok', text: 'Mentions rest', points: 2 }, { id: 'echo', text: 'Mentions fluids', points: 1 }] };
  writeFileSync(file, `${[0, 1, 2].map((index) => JSON.stringify({ id: `i${index}`, prompt: `Question ${index}`, response: 'Rest.', rubric })).join('\n')}\n`);
  return file;
}

describe('planted secrets never reach an output', () => {
  test('grade (results, metrics, HTML report, stderr) and report (HTML, Markdown): a 400 that echoes the key', async ({ makeTempDir, startJudge }) => {
    const fake = await startJudge((request) =>
      request.criteria[0]?.id === 'echo' ? { status: 400, body: { error: { message: echo(request) } } } : { content: binaryVerdict(true) },
    );
    const directory = makeTempDir('rubricate-secrets-');
    const out = join(directory, 'results.jsonl');
    const metrics = join(directory, 'metrics.json');
    const html = join(directory, 'report.html');
    const markdown = join(directory, 'report.md');
    const grade = await runCli([
      'grade', '--input', itemsFile(directory), '--out', out, '--metrics', metrics, '--report', html,
      '--judge', 'openai:m', '--judge-base-url', secretUrl(fake.baseUrl), '--judge-api-key', apiKey, '--no-cache', '--quiet', '--max-attempts', '1',
    ]);
    expect(grade.code).toBe(3);
    // The key did reach the judge, and the judge did echo it: the outputs had the chance to leak it.
    expect(fake.requests[0].headers.authorization).toBe(`Bearer ${apiKey}`);
    const results = readFileSync(out, 'utf8');
    expect(results).toContain('JUDGE_REQUEST_REJECTED');
    expect(results).toContain('"base_url":"http://[REDACTED]@127.0.0.1:');
    const report = await runCli(['report', '--input', out, '--out', markdown]);
    expect(report.code).toBe(0);
    const toStdout = await runCli(['report', '--input', out, '--out', '-']);
    for (const [label, text] of [
      ['results', results],
      ['metrics', readFileSync(metrics, 'utf8')],
      ['HTML report', readFileSync(html, 'utf8')],
      ['Markdown report', readFileSync(markdown, 'utf8')],
      ['grade stderr', grade.stderr],
      ['grade stdout', grade.stdout],
      ['report stdout', toStdout.stdout + toStdout.stderr + report.stderr],
    ] as const) {
      expectClean(label, text);
    }
    // Three CLI processes (grade with its report, then two reports): slow on a loaded machine.
  }, hangGuard(180_000));

  test('grade: a 401 whose body echoes the key stops the run without printing the key', async ({ makeTempDir, startJudge }) => {
    const fake = await startJudge((request) => ({ status: 401, body: { error: { message: echo(request), type: 'invalid_request_error', code: 'invalid_api_key' } } }));
    const directory = makeTempDir('rubricate-secrets-');
    const out = join(directory, 'results.jsonl');
    const grade = await runCli(['grade', '--input', itemsFile(directory), '--out', out, '--judge', 'openai:m', '--judge-base-url', secretUrl(fake.baseUrl), '--judge-api-key', apiKey, '--no-cache', '--quiet']);
    expect(grade.code).toBe(4);
    expect(grade.stderr).toContain('JUDGE_AUTH');
    expect(grade.stderr).toContain('invalid key Bearer [REDACTED]');
    expectClean('stderr', grade.stderr + grade.stdout);
    // A run stopped by its judge may leave no results file at all (outputs are written atomically).
    if (existsSync(out)) expectClean('results', readFileSync(out, 'utf8'));
  }, hangGuard(120_000));

  test('a report of results written before redaction existed shows no credential', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-secrets-');
    const out = join(directory, 'old.jsonl');
    const line = {
      id: 'old', status: 'error', score: null, rubricate_version: '0.0.1',
      judge: { id: 'openai:m', model: 'm', base_url: `http://u:${urlPassword}@judge.example/v1?api_key=${querySecret}`, template_version: 'per-criterion/v1', mode: 'per-criterion' },
      criteria: [{ id: 'c', text: 't', points: 1, tags: [], kind: 'principle', source: 'judge', status: 'error', met: null, error: { code: 'JUDGE_AUTH', message: `refused Bearer ${apiKey}` } }],
    };
    writeFileSync(out, `${JSON.stringify(line)}\n`);
    for (const name of ['old.html', 'old.md']) {
      const result = await runCli(['report', '--input', out, '--out', join(directory, name)]);
      expect(result.code).toBe(0);
      expectClean(name, readFileSync(join(directory, name), 'utf8') + result.stderr);
    }
  }, hangGuard(120_000));

  test('serve: /healthz (without and with the token), /metrics, error answers and the log', async ({ startJudge }) => {
    const fake = await startJudge((request) => ({ status: 401, body: { error: { message: echo(request) } } }));
    // A second replica that is down: the pool logs its ejection, naming the endpoint.
    const down = await startFakeJudge(() => ({ content: 'unused' }));
    const downUrl = secretUrl(down.baseUrl);
    await down.close();
    const environment = { ...process.env };
    delete environment.NODE_OPTIONS;
    const child = spawn(process.execPath, [
      cliPath, 'serve', '--port', '0', '--no-cache', '--log-level', 'info', '--token', serverToken,
      '--judge', 'openai:m', '--judge-base-url', downUrl, '--judge-base-url', secretUrl(fake.baseUrl), '--judge-api-key', apiKey, '--max-attempts', '1',
    ], { env: environment });
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const listening = await new Promise<{ url: string }>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          const parsed = safeParseJson(stdout.split('\n')[0]);
          if (stdout.includes('\n') && parsed.ok) resolve(parsed.value as { url: string });
        });
        exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
      });
      const authorization = { authorization: `Bearer ${serverToken}` };
      const json = { 'content-type': 'application/json', ...authorization };
      const item = { prompt: 'q', response: 'Rest.', rubric: { criteria: [{ text: 'Mentions rest', points: 1 }] } };
      const answers: string[] = [];
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const scored = await fetch(`${listening.url}/v1/score`, { method: 'POST', headers: json, body: JSON.stringify(item) });
        answers.push(await scored.text());
      }
      expect(answers.join('\n')).toContain('JUDGE_AUTH');
      answers.push(await (await fetch(`${listening.url}/v1/score`, { method: 'POST', headers: json, body: '{not json' })).text());
      answers.push(await (await fetch(`${listening.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(item) })).text());
      const anonymous = await fetch(`${listening.url}/healthz`);
      expect(anonymous.status).toBe(503);
      expect(await anonymous.json()).toEqual({ status: 'unhealthy' });
      const detailed = await (await fetch(`${listening.url}/healthz`, { headers: authorization })).text();
      expect(detailed).toContain('JUDGE_AUTH');
      expect(detailed).toContain('[REDACTED]');
      const metrics = await (await fetch(`${listening.url}/metrics`, { headers: authorization })).text();
      expect(metrics).toContain('rubricate_judge_endpoint_healthy');
      child.kill('SIGTERM');
      await exited;
      expectClean('score answers', answers.join('\n'));
      expectClean('/healthz (token)', detailed);
      expectClean('/metrics', metrics);
      expectClean('serve stdout', stdout);
      expect(stderr).toContain('"msg":"request"');
      expectClean('serve log', stderr);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, hangGuard(120_000));
});
