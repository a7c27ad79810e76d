/**
 * Deterministic-check throughput on the IFEval set: every instruction of the 541 GPT-4
 * responses, repeated until the timing is stable, in strict and loose mode, with and
 * without the language-detection instructions. Run: `npx tsx bench/checks.ts`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { clearTextFactsCache } from '../src/checks/text-facts.js';
import { runCheck } from '../src/checks/registry.js';
import type { CheckMode } from '../src/checks/types.js';
import type { CheckSpec } from '../src/rubric/schema.js';
import { safeParseJson } from '../src/util/json.js';
import { dataPath } from '../src/testing/data.js';

const LANGUAGE_TYPES = new Set(['language:response_language', 'change_case:english_capital', 'change_case:english_lowercase', 'language']);

export interface ChecksBenchmarkRow {
  mode: CheckMode;
  languageDetection: boolean;
  criteria: number;
  /** Wall-clock seconds of the timed rounds. */
  seconds: number;
  /** Criteria per wall-clock second on one thread. */
  criteriaPerSecond: number;
  /** Criteria per second of this process's CPU time: steadier when other work shares the cores. */
  criteriaPerCpuSecond: number;
  /** Criteria per second in the fastest round (least disturbed by other processes). */
  criteriaPerSecondBestRound: number;
}

export interface ChecksBenchmarkResult {
  dataset: string;
  rows: ChecksBenchmarkRow[];
}

interface Case {
  spec: CheckSpec;
  response: string;
  prompt: string;
}

function parseJsonl(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const parsed = safeParseJson(line);
      if (!parsed.ok) throw new Error(`${file}: ${parsed.error}`);
      return parsed.value as Record<string, unknown>;
    });
}

function loadCases(dataFolder: string): Case[] {
  const responses = new Map<string, string>();
  for (const row of parseJsonl(path.join(dataFolder, 'input_response_data_gpt4_20231107_145030.jsonl'))) {
    responses.set(row.prompt as string, row.response as string);
  }
  const cases: Case[] = [];
  for (const row of parseJsonl(path.join(dataFolder, 'input_data.jsonl'))) {
    const prompt = row.prompt as string;
    const response = responses.get(prompt);
    if (response === undefined) continue;
    (row.instruction_id_list as string[]).forEach((type, index) => {
      cases.push({ spec: { type, ...(row.kwargs as Record<string, unknown>[])[index] }, response, prompt });
    });
  }
  return cases;
}

function timeCases(
  cases: Case[],
  mode: CheckMode,
  minimumSeconds: number,
): { criteria: number; seconds: number; cpuSeconds: number; bestRoundSeconds: number } {
  // One untimed pass: JIT warm-up, language profiles, per-spec parameter caches.
  for (const { spec, response, prompt } of cases) runCheck(spec, response, { prompt, mode });
  let criteria = 0;
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  let seconds: number;
  let bestRoundSeconds = Number.POSITIVE_INFINITY;
  do {
    const roundStart = process.hrtime.bigint();
    // Cold text caches each round, so a round measures real tokenisation, not lookups.
    clearTextFactsCache();
    for (const { spec, response, prompt } of cases) runCheck(spec, response, { prompt, mode });
    criteria += cases.length;
    const now = process.hrtime.bigint();
    bestRoundSeconds = Math.min(bestRoundSeconds, Number(now - roundStart) / 1e9);
    seconds = Number(now - start) / 1e9;
  } while (seconds < minimumSeconds);
  const cpu = process.cpuUsage(cpuStart);
  return { criteria, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, bestRoundSeconds };
}

export async function runChecksBenchmark(
  options: { dataFolder?: string; minimumSeconds?: number } = {},
): Promise<ChecksBenchmarkResult | null> {
  const dataFolder = options.dataFolder ?? dataPath('ifeval');
  if (!existsSync(path.join(dataFolder, 'input_data.jsonl'))) return null;
  const allCases = loadCases(dataFolder);
  const withoutLanguage = allCases.filter(({ spec }) => !LANGUAGE_TYPES.has(spec.type));
  const rows: ChecksBenchmarkRow[] = [];
  for (const mode of ['strict', 'loose'] as const) {
    for (const languageDetection of [false, true]) {
      const cases = languageDetection ? allCases : withoutLanguage;
      const { criteria, seconds, cpuSeconds, bestRoundSeconds } = timeCases(cases, mode, options.minimumSeconds ?? 2);
      rows.push({
        mode,
        languageDetection,
        criteria,
        seconds,
        criteriaPerSecond: criteria / seconds,
        criteriaPerCpuSecond: criteria / cpuSeconds,
        criteriaPerSecondBestRound: cases.length / bestRoundSeconds,
      });
    }
  }
  return { dataset: `IFEval GPT-4 responses (${allCases.length} criteria, ${withoutLanguage.length} without language detection)`, rows };
}

function printTable(result: ChecksBenchmarkResult): void {
  console.log(`Deterministic checks — ${result.dataset}, one thread`);
  console.log('mode    language detection   criteria     seconds   criteria/second   criteria/CPU-second   best round /second');
  const format = (value: number) => Math.round(value).toLocaleString('en-US');
  for (const row of result.rows) {
    console.log(
      `${row.mode.padEnd(8)}${(row.languageDetection ? 'included' : 'excluded').padEnd(21)}${String(row.criteria).padStart(8)}` +
        `${row.seconds.toFixed(2).padStart(12)}${format(row.criteriaPerSecond).padStart(18)}` +
        `${format(row.criteriaPerCpuSecond).padStart(22)}${format(row.criteriaPerSecondBestRound).padStart(21)}`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await runChecksBenchmark();
  if (result === null) console.log('IFEval data not found at ../shared/data/ifeval: checks benchmark skipped');
  else printTable(result);
}
