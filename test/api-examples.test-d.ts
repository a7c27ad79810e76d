// Written by `npm run api-examples` from the `@example` of every export of the package and its subpath entries
// (test/support/api-examples.ts); `npm run typecheck` compiles it, nothing runs it. Do not edit it by hand.
/* eslint-disable */
import { contrastGroup, createRubricEvolver, createRubricGenerator, defaultGeneratorSampling, groupPairs, readPreferencePairs, refineRubric } from '../src/entries/generation.js';
import { calibrateLlmRubric, computeBinaryMeta, computePairwiseMeta, fitScoreCalibration, formatMetaTable, humanBaseline, llmJudgeMeta, llmRubricBaselines, parseProbeList, probe, scorePublishedJudge } from '../src/entries/meta.js';
import { buildReport, renderReport, writeReport } from '../src/entries/report.js';
import { createServer, defaultHost, defaultPort, groupAdvantages, parseErrorPolicy, RewardService, startServer } from '../src/entries/server.js';
import { defaultCachePath, openReplyStore, RedisReplyStore, SqliteReplyStore } from '../src/entries/store.js';
import { batchedVerdicts, binaryVerdict, buildTinyGguf, parseGradingPrompt, startFakeJudge, writeTinyGguf } from '../src/entries/testing.js';
import { aggregate, Comparer, CompareSummaryBuilder, costOf, createJudge, defaultCheckRunner, defaultJudgeSpec, defaultSampling, defaultScoringName, errorCodes, getItemImporter, getPairwiseImporter, getResultsImporter, getScoring, grade, gradeFile, Grader, modelSpecSchema, normalizeItem, normalizeRubric, parseRunSpec, readResults, registerJudge, registerScoring, resultRecordSchema, RubricateError, rubricateVersion, rubricHash, runCheck, runSpecSchema, scoreFile, scoringNames, toScoredItem, unreadSettings, type Usage, validateCheck, withFailedAsZero, wrapJudge } from '../src/index.js';
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** rubricate: RubricateError (src/errors.ts) */
export async function rubricate__RubricateError(): Promise<void> {
  const error = new RubricateError('INPUT_INVALID', 'expected a string', { file: 'items.jsonl', line: 3, field: 'response' });
  if (RubricateError.isInstance(error)) console.error(error.code, error.message);
}

/** rubricate: errorCodes (src/errors.ts) */
export async function rubricate__errorCodes(): Promise<void> {
  console.log(Object.keys(errorCodes).join('\n'));
}

/** rubricate: rubricateVersion (src/version.ts) */
export async function rubricate__rubricateVersion(): Promise<void> {
  console.log(`graded with rubricate ${rubricateVersion}`);
}

/** rubricate: normalizeItem (src/rubric/normalize.ts) */
export async function rubricate__normalizeItem(): Promise<void> {
  const item = normalizeItem({ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } });
  console.log(item.rubric.criteria[0].id);
}

/** rubricate: normalizeRubric (src/rubric/normalize.ts) */
export async function rubricate__normalizeRubric(): Promise<void> {
  const rubric = normalizeRubric({ criteria: [{ text: 'Cites a source', points: 2 }, { text: 'Insults the user', points: -5 }] });
  console.log(rubric.id, rubric.criteria.length);
}

/** rubricate: rubricHash (src/rubric/hashing.ts) */
export async function rubricate__rubricHash(): Promise<void> {
  const hash = rubricHash(normalizeRubric({ criteria: [{ text: 'Cites a source' }] }));
}

/** rubricate: getItemImporter (src/formats/index.ts) */
export async function rubricate__getItemImporter(): Promise<void> {
  for await (const record of getItemImporter('healthbench').read('healthbench.jsonl', {})) {
    if (record.kind === 'item') console.log(record.item.id);
  }
}

/** rubricate: getResultsImporter (src/formats/index.ts) */
export async function rubricate__getResultsImporter(): Promise<void> {
  for await (const line of getResultsImporter('simple-evals').read('simple-evals.json', {})) console.log(line.kind);
}

/** rubricate: getPairwiseImporter (src/formats/index.ts) */
export async function rubricate__getPairwiseImporter(): Promise<void> {
  for await (const record of getPairwiseImporter('judgebench').read('judgebench.jsonl', {})) console.log(record.kind);
}

/** rubricate: wrapJudge (src/judges/middleware.ts) */
export async function rubricate__wrapJudge(): Promise<void> {
  const judge = await createJudge({ model: 'openai:gpt-4.1-mini' });
  const seconds: number[] = [];
  const timed = wrapJudge(judge, {
    async wrapComplete({ doComplete }) {
      const started = performance.now();
      try {
        return await doComplete();
      } finally {
        seconds.push((performance.now() - started) / 1000);
      }
    },
  });
}

/** rubricate: createJudge (src/judges/registry.ts) */
export async function rubricate__createJudge(): Promise<void> {
  const judge = await createJudge({ model: 'openai:gpt-4.1-mini', endpoint: { baseUrl: 'http://localhost:8000/v1' } });
}

/** rubricate: registerJudge (src/judges/registry.ts) */
export async function rubricate__registerJudge(): Promise<void> {
  registerJudge('echo', { reads: ['endpoint.cacheNamespace'], create: async ({ target }) => createJudge({ model: `scripted:${target}` }) });
  // A backend's own settings: parsed with the run spec, an unknown one refused by name.
  registerJudge<{ volume: number }>('loud', {
    reads: [],
    settings: z.strictObject({ volume: z.int().min(0).max(11).default(5) }),
    create: async ({ target, settings }) => createJudge({ model: `scripted:${target}-${settings?.volume ?? 5}` }),
  });
  await createJudge({ model: 'loud:x', settings: { volume: 11 } });
}

/** rubricate: defaultJudgeSpec (src/judges/registry.ts) */
export async function rubricate__defaultJudgeSpec(): Promise<void> {
  const judge = await createJudge({ model: defaultJudgeSpec() });
}

/** rubricate: unreadSettings (src/judges/registry.ts) */
export async function rubricate__unreadSettings(): Promise<void> {
  // ['openai.structuredOutput']: the anthropic backend does not read it
  const unread = unreadSettings({ model: 'anthropic:claude-sonnet-4-5', openai: { structuredOutput: 'none' } });
}

/** rubricate: parseRunSpec (src/spec/run-spec.ts) */
export async function rubricate__parseRunSpec(): Promise<void> {
  const spec = parseRunSpec({ judges: [{ model: 'openai:gpt-4.1-mini' }], plan: { explanation: 'short' } });
}

/** rubricate: runSpecSchema (src/spec/run-spec.ts) */
export async function rubricate__runSpecSchema(): Promise<void> {
  const groups = Object.keys(runSpecSchema.shape); // judges, plan, calls, jury, scoring…
}

/** rubricate: modelSpecSchema (src/spec/run-spec.ts) */
export async function rubricate__modelSpecSchema(): Promise<void> {
  const model = modelSpecSchema.parse({ model: 'openai:gpt-4.1-mini', endpoint: { baseUrl: 'http://localhost:8000/v1' } });
}

/** rubricate: grade (src/pipeline/grade.ts) */
export async function rubricate__grade(): Promise<void> {
  const judge = await createJudge({ model: 'openai:gpt-4.1-mini' });
  const { results, metrics } = await grade([{ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } }], { judge, plan: { explanation: 'short' } });
  console.log(results[0].status, metrics);
}

/** rubricate: Grader (src/pipeline/grader.ts) */
export async function rubricate__Grader(): Promise<void> {
  const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), scoring: 'weighted_mean' });
  const record = await grader.gradeItem(normalizeItem({ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } }));
}

/** rubricate: gradeFile (src/pipeline/grade-file.ts) */
export async function rubricate__gradeFile(): Promise<void> {
  const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) });
  const outcome = await gradeFile({ grader, records: getItemImporter('items').read('items.jsonl', {}), out: 'results.jsonl' });
  console.log(outcome.metrics, outcome.invalid);
}

/** rubricate: scoreFile (src/pipeline/score-file.ts) */
export async function rubricate__scoreFile(): Promise<void> {
  const { metrics, scored, invalid } = await scoreFile('results.jsonl', { scoring: 'healthbench' });
}

/** rubricate: Comparer (src/pipeline/compare.ts) */
export async function rubricate__Comparer(): Promise<void> {
  const comparer = new Comparer({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), swap: true });
  const line = await comparer.comparePair({ id: 'p1', prompt: [{ role: 'user', content: 'Name a prime.' }], responseA: '7', responseB: '8' });
}

/** rubricate: CompareSummaryBuilder (src/pipeline/compare.ts) */
export async function rubricate__CompareSummaryBuilder(): Promise<void> {
  const comparer = new Comparer({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) });
  const summary = new CompareSummaryBuilder();
  for await (const line of comparer.compareStream(getPairwiseImporter('llmbar').read('llmbar/', {}))) summary.add(line);
  console.log(summary.finish());
}

/** rubricate: readResults (src/results/results.ts) */
export async function rubricate__readResults(): Promise<void> {
  for await (const line of readResults('results.jsonl')) {
    if (line.kind === 'result') console.log(line.record.id, line.record.score);
  }
}

/** rubricate: resultRecordSchema (src/results/results.ts) */
export async function rubricate__resultRecordSchema(): Promise<void> {
  const first = resultRecordSchema.parse(JSON.parse(readFileSync('results.jsonl', 'utf8').split('\n')[0]));
}

/** rubricate: toScoredItem (src/results/results.ts) */
export async function rubricate__toScoredItem(): Promise<void> {
  const scored = [];
  for await (const line of readResults('results.jsonl')) if (line.kind === 'result') scored.push(toScoredItem(line.record));
  const metrics = aggregate(getScoring('healthbench'), scored);
}

/** rubricate: defaultCheckRunner (src/pipeline/defaults.ts) */
export async function rubricate__defaultCheckRunner(): Promise<void> {
  const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), checkRunner: defaultCheckRunner });
}

/** rubricate: defaultSampling (src/pipeline/defaults.ts) */
export async function rubricate__defaultSampling(): Promise<void> {
  const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), plan: { sampling: { ...defaultSampling, maxTokens: 2048 } } });
}

/** rubricate: defaultScoringName (src/pipeline/defaults.ts) */
export async function rubricate__defaultScoringName(): Promise<void> {
  const scoring = getScoring(defaultScoringName); // weighted_mean
}

/** rubricate: costOf (src/engine/usage.ts) */
export async function rubricate__costOf(): Promise<void> {
  const usage: Usage = { prompt_tokens: 120_000, completion_tokens: 8_000, cached_prompt_tokens: 0, calls: 40, cache_hits: 0, retries: 0, gate_calls_saved: 0 };
  const dollars = costOf(usage, { input: 0.4, output: 1.6 }); // prices per million tokens
}

/** rubricate: getScoring (src/scoring/registry.ts) */
export async function rubricate__getScoring(): Promise<void> {
  const metrics = aggregate(getScoring('weighted_mean'), [{ id: 'q1', status: 'ok', criteria: [{ id: 'c1', points: 1, tags: [], status: 'ok', met: true }] }]);
}

/** rubricate: registerScoring (src/scoring/registry.ts) */
export async function rubricate__registerScoring(): Promise<void> {
  registerScoring({ ...getScoring('weighted_mean'), name: 'house_mean', description: 'the weighted mean, under our own name' });
}

/** rubricate: scoringNames (src/scoring/registry.ts) */
export async function rubricate__scoringNames(): Promise<void> {
  console.log(scoringNames().join(', '));
}

/** rubricate: aggregate (src/scoring/registry.ts) */
export async function rubricate__aggregate(): Promise<void> {
  const metrics = aggregate(getScoring('healthbench'), [{ id: 'q1', status: 'ok', criteria: [{ id: 'c1', points: 5, tags: ['axis:accuracy'], status: 'ok', met: true }] }]);
}

/** rubricate: withFailedAsZero (src/scoring/failed-as-zero.ts) */
export async function rubricate__withFailedAsZero(): Promise<void> {
  const { metrics } = await scoreFile('results.jsonl', { scoring: withFailedAsZero(getScoring('weighted_mean')) });
}

/** rubricate: runCheck (src/checks/registry.ts) */
export async function rubricate__runCheck(): Promise<void> {
  const outcome = runCheck({ type: 'detectable_format:json_format' }, '{"answer": 4}', { prompt: 'Answer in JSON.', mode: 'strict' });
}

/** rubricate: validateCheck (src/checks/registry.ts) */
export async function rubricate__validateCheck(): Promise<void> {
  const checked = validateCheck({ type: 'length_constraints:number_words', relation: 'at least', num_words: 300 });
  if (!checked.ok) console.error(checked.error.message);
}

/** rubricate/server: createServer (src/server/app.ts) */
export async function rubricate_server__createServer(): Promise<void> {
  const service = new RewardService({ grading: { judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) } });
  const app = createServer({ service, token: 'a-long-random-token' });
  const health = await app.fetch(new Request('http://127.0.0.1/healthz'));
}

/** rubricate/server: startServer (src/server/start.ts) */
export async function rubricate_server__startServer(): Promise<void> {
  const service = new RewardService({ grading: { judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) } });
  const running = await startServer({ service, port: 0 });
  console.log(`serving on ${running.url}`);
  await running.close();
}

/** rubricate/server: defaultHost (src/server/start.ts) */
export async function rubricate_server__defaultHost(): Promise<void> {
  console.log(`http://${defaultHost}:${defaultPort}/v1/score`);
}

/** rubricate/server: defaultPort (src/server/start.ts) */
export async function rubricate_server__defaultPort(): Promise<void> {
  console.log(`http://${defaultHost}:${defaultPort}/v1/score`);
}

/** rubricate/server: RewardService (src/server/reward-service.ts) */
export async function rubricate_server__RewardService(): Promise<void> {
  const service = new RewardService({ grading: { judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) }, deadlineMs: 60_000 });
  const scored = await service.scoreItems([normalizeItem({ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } })]);
}

/** rubricate/server: parseErrorPolicy (src/server/rewards.ts) */
export async function rubricate_server__parseErrorPolicy(): Promise<void> {
  const policy = parseErrorPolicy('fallback=0'); // { kind: 'fallback', value: 0 }
}

/** rubricate/server: groupAdvantages (src/server/advantages.ts) */
export async function rubricate_server__groupAdvantages(): Promise<void> {
  const advantages = groupAdvantages([0.2, 0.9, null, 0.5], 'grpo'); // null stays null
}

/** rubricate/report: writeReport (src/report/index.ts) */
export async function rubricate_report__writeReport(): Promise<void> {
  const written = await writeReport({ input: 'results.jsonl', out: 'report.html', title: 'Nightly grading' });
}

/** rubricate/report: buildReport (src/report/index.ts) */
export async function rubricate_report__buildReport(): Promise<void> {
  const markdown = renderReport(await buildReport({ input: 'results.jsonl' }), 'md');
}

/** rubricate/report: renderReport (src/report/index.ts) */
export async function rubricate_report__renderReport(): Promise<void> {
  const html = renderReport(await buildReport({ input: 'results.jsonl', compare: 'baseline.jsonl' }), 'html');
}

/** rubricate/generation: createRubricGenerator (src/generation/generator.ts) */
export async function rubricate_generation__createRubricGenerator(): Promise<void> {
  const generator = createRubricGenerator({ generator: await createJudge({ model: 'openai:gpt-4.1' }), maxCriteria: 12 });
  const { rubric, warnings } = await generator.generate({ prompt: [{ role: 'user', content: 'Plan a week of vegetarian dinners.' }] });
}

/** rubricate/generation: defaultGeneratorSampling (src/generation/generator.ts) */
export async function rubricate_generation__defaultGeneratorSampling(): Promise<void> {
  const generator = createRubricGenerator({ generator: await createJudge({ model: 'openai:gpt-4.1' }), sampling: { ...defaultGeneratorSampling, temperature: 0 } });
}

/** rubricate/generation: refineRubric (src/generation/refine.ts) */
export async function rubricate_generation__refineRubric(): Promise<void> {
  const judge = await createJudge({ model: 'openai:gpt-4.1-mini' });
  const outcome = await refineRubric(
    { id: 'q1', prompt: [{ role: 'user', content: 'Explain recursion.' }], responses: ['A function calling itself…', 'Recursion is when…'] },
    { generator: createRubricGenerator({ generator: judge }), grader: new Grader({ judge }), iterations: 2 },
  );
}

/** rubricate/generation: contrastGroup (src/generation/contrastive.ts) */
export async function rubricate_generation__contrastGroup(): Promise<void> {
  const judge = await createJudge({ model: 'openai:gpt-4.1-mini' });
  const { pairs } = await readPreferencePairs('pairs.jsonl');
  for (const group of groupPairs(pairs, 'per-prompt')) {
    const outcome = await contrastGroup(group, { generator: createRubricGenerator({ generator: judge }), grader: new Grader({ judge }), attempts: 3 });
  }
}

/** rubricate/generation: groupPairs (src/generation/contrastive.ts) */
export async function rubricate_generation__groupPairs(): Promise<void> {
  const { pairs } = await readPreferencePairs('pairs.jsonl');
  const groups = groupPairs(pairs, 'per-prompt'); // one pair to generate from, the prompt's others held out
}

/** rubricate/generation: readPreferencePairs (src/generation/contrastive.ts) */
export async function rubricate_generation__readPreferencePairs(): Promise<void> {
  const { pairs, summary } = await readPreferencePairs('pairs.jsonl', 'pairs', (warning) => console.warn(warning));
}

/** rubricate/generation: createRubricEvolver (src/generation/evolver.ts) */
export async function rubricate_generation__createRubricEvolver(): Promise<void> {
  const evolver = createRubricEvolver({ generator: await createJudge({ model: 'openai:gpt-4.1' }), store: ':memory:', topK: 5 });
}

/** rubricate/meta: computeBinaryMeta (src/meta/binary-metrics.ts) */
export async function rubricate_meta__computeBinaryMeta(): Promise<void> {
  const report = computeBinaryMeta([{ prediction: true, label: true }, { prediction: false, label: true }, { prediction: false, label: false }]);
  console.log(formatMetaTable(report));
}

/** rubricate/meta: computePairwiseMeta (src/scoring/pairwise-metrics.ts) */
export async function rubricate_meta__computePairwiseMeta(): Promise<void> {
  const report = computePairwiseMeta([{ gold: 'A', original: 'A', swapped: 'A' }, { gold: 'B', original: 'A', swapped: 'B' }]);
}

/** rubricate/meta: scorePublishedJudge (src/meta/index.ts) */
export async function rubricate_meta__scorePublishedJudge(): Promise<void> {
  const report = await scorePublishedJudge('judgebench', 'judgebench-outputs.jsonl');
  console.log(formatMetaTable(report));
}

/** rubricate/meta: formatMetaTable (src/meta/format-table.ts) */
export async function rubricate_meta__formatMetaTable(): Promise<void> {
  console.log(formatMetaTable(computeBinaryMeta([{ prediction: true, label: [true, false] }])));
}

/** rubricate/meta: probe (src/meta/probes/runner.ts) */
export async function rubricate_meta__probe(): Promise<void> {
  const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) });
  const report = await probe(grader, [normalizeItem({ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } })], { probes: parseProbeList('padding,injection'), seed: 1 });
}

/** rubricate/meta: parseProbeList (src/meta/probes/runner.ts) */
export async function rubricate_meta__parseProbeList(): Promise<void> {
  const probes = parseProbeList('padding,flattery,injection');
}

/** rubricate/meta: humanBaseline (src/meta/binary-metrics.ts) */
export async function rubricate_meta__humanBaseline(): Promise<void> {
  const baseline = humanBaseline([{ prediction: true, label: [true, false], raters: ['r1', 'r2'] }]);
}

/** rubricate/meta: llmJudgeMeta (src/meta/llmjudge.ts) */
export async function rubricate_meta__llmJudgeMeta(): Promise<void> {
  const report = await llmJudgeMeta('results.jsonl', 'human-labels.jsonl');
}

/** rubricate/meta: llmRubricBaselines (src/meta/llm-rubric.ts) */
export async function rubricate_meta__llmRubricBaselines(): Promise<void> {
  const report = await llmRubricBaselines('llm-rubric/', 0.95);
}

/** rubricate/meta: calibrateLlmRubric (src/meta/llm-rubric-calibration.ts) */
export async function rubricate_meta__calibrateLlmRubric(): Promise<void> {
  const report = await calibrateLlmRubric('llm-rubric/', { train: 'synthetic', test: 'real', seed: 0 });
}

/** rubricate/meta: fitScoreCalibration (src/meta/score-calibration.ts) */
export async function rubricate_meta__fitScoreCalibration(): Promise<void> {
  const report = await fitScoreCalibration('results.jsonl', 'overall-scores.jsonl', { seed: 0, testFraction: 0.2 });
}

/** rubricate/store: SqliteReplyStore (src/store/sqlite.ts) */
export async function rubricate_store__SqliteReplyStore(): Promise<void> {
  const store = new SqliteReplyStore(defaultCachePath());
  const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), store });
  await store.close();
}

/** rubricate/store: defaultCachePath (src/store/sqlite.ts) */
export async function rubricate_store__defaultCachePath(): Promise<void> {
  console.log(`replies are kept in ${defaultCachePath()}`);
}

/** rubricate/store: RedisReplyStore (src/store/redis.ts) */
export async function rubricate_store__RedisReplyStore(): Promise<void> {
  const store = new RedisReplyStore('redis://localhost:6379');
  const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), store });
  await store.close();
}

/** rubricate/store: openReplyStore (src/store/open.ts) */
export async function rubricate_store__openReplyStore(): Promise<void> {
  const store = openReplyStore(process.env.RUBRICATE_STORE ?? 'cache.sqlite');
  await store.close();
}

/** rubricate/testing: startFakeJudge (src/testing/fake-judge.ts) */
export async function rubricate_testing__startFakeJudge(): Promise<void> {
  const fake = await startFakeJudge((request) => ({ content: binaryVerdict(request.response?.includes('4') ?? false) }));
  const judge = await createJudge({ model: 'openai:fake', endpoint: { baseUrl: fake.baseUrl } });
  const { results } = await grade([{ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } }], { judge });
  await fake.close();
}

/** rubricate/testing: binaryVerdict (src/testing/fake-judge.ts) */
export async function rubricate_testing__binaryVerdict(): Promise<void> {
  const fake = await startFakeJudge(() => ({ content: binaryVerdict(false, 'It never answers the question.') }));
}

/** rubricate/testing: batchedVerdicts (src/testing/fake-judge.ts) */
export async function rubricate_testing__batchedVerdicts(): Promise<void> {
  const fake = await startFakeJudge((request) => ({ content: batchedVerdicts(request.criteria, (criterion) => criterion.points > 0) }));
}

/** rubricate/testing: parseGradingPrompt (src/testing/fake-judge.ts) */
export async function rubricate_testing__parseGradingPrompt(): Promise<void> {
  const userText = 'the user message of a grading request';
  const { response, criteria } = parseGradingPrompt(userText);
}

/** rubricate/testing: writeTinyGguf (src/testing/tiny-gguf.ts) */
export async function rubricate_testing__writeTinyGguf(): Promise<void> {
  const path = await writeTinyGguf({ path: 'tiny.gguf', bias: 'true' });
  const judge = await createJudge({ model: `gguf:${path}` });
}

/** rubricate/testing: buildTinyGguf (src/testing/tiny-gguf.ts) */
export async function rubricate_testing__buildTinyGguf(): Promise<void> {
  const bytes = buildTinyGguf({ bias: 'false' });
}
