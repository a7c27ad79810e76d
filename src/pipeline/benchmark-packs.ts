/**
 * Benchmark packs: `--benchmark NAME[:SUBSET]`. A pack names a benchmark's data file (found in the
 * data folder, `RUBRICATE_DATA_DIR`, never downloaded behind the user's back), the importer that
 * reads it, the benchmark's own scoring, the grader protocol and the judge its reference uses (or,
 * where the reference pins none, the judge rubricate picks, said so). `packSettings` turns a pack
 * into the input settings and run-spec defaults of a run, for `grade` and any command that grades.
 */
import { existsSync } from 'node:fs';
import { RubricateError } from '../errors.js';
import { itemImporters, type ItemFormatName } from '../formats/index.js';
import type { JudgeProtocol } from '../spec/run-spec.js';
import { dataDirectory } from '../testing/data.js';
import { createRegistry } from '../util/registry.js';
import { resolve } from 'node:path';

/** One place a pack's data may be, relative to the data folder; the first present is used. */
export interface PackFile {
  path: string;
  /** Set when the file is a published sample of the benchmark, not all of it: what it holds. */
  sample?: string;
  /** In `npm run data:fetch`'s list (scripts/data-sources.json); otherwise where to get it. */
  fetch: true | { from: string };
}

export interface BenchmarkPack {
  name: string;
  title: string;
  format: ItemFormatName;
  /** The benchmark's own scoring (a registered scoring name). */
  scoring: string;
  protocol: JudgeProtocol;
  /** The judge a run uses when none is given. */
  judge: string;
  /** `reference`: the judge the benchmark's reference implementation grades with; `rubricate`: the reference pins none we could name, so rubricate's choice. */
  judgeSource: 'reference' | 'rubricate';
  /** Where the responses come from when no `--responses` is given. */
  responses: string;
  /** The whole benchmark's files (most complete first), and each subset's. */
  files: readonly PackFile[];
  subsets?: Readonly<Record<string, readonly PackFile[]>>;
}

const fetched = true as const;
/** Types each entry as a pack (its subsets an open record), so the registry's entries share one type. */
const definePack = (definition: BenchmarkPack): BenchmarkPack => definition;

export const benchmarkPacks = createRegistry({ what: 'benchmark', field: 'benchmark' }, {
  healthbench: definePack({
    name: 'healthbench',
    title: 'HealthBench (OpenAI simple-evals)',
    format: 'healthbench',
    scoring: 'healthbench',
    protocol: 'native',
    judge: 'openai:gpt-4.1-2025-04-14',
    judgeSource: 'reference',
    responses: '--responses FILE ({prompt_id, response}) or --response-from ideal',
    files: [
      { path: 'healthbench/2025-05-07-06-14-12_oss_eval.jsonl', fetch: { from: 'openai/simple-evals (the HealthBench examples file)' } },
      { path: 'healthbench/oss_eval_first100.jsonl', sample: 'the first 100 of 5,000 examples', fetch: fetched },
    ],
    subsets: {
      hard: [{ path: 'healthbench/hard_2025-05-08-21-00-10.jsonl', fetch: { from: 'openai/simple-evals (the HealthBench hard examples file)' } }],
      consensus: [
        { path: 'healthbench/consensus_2025-05-09-20-00-46.jsonl', fetch: { from: 'openai/simple-evals (the HealthBench consensus examples file)' } },
        { path: 'healthbench/context_seeking_consensus_hard_104.jsonl', sample: '104 context-seeking examples of the consensus file', fetch: fetched },
      ],
    },
  }),
  ifeval: definePack({
    name: 'ifeval',
    title: 'IFEval (Google)',
    format: 'ifeval',
    scoring: 'ifeval',
    protocol: 'native',
    judge: 'none',
    judgeSource: 'reference',
    responses: '--responses FILE ({prompt, response} or {key, response})',
    files: [{ path: 'ifeval/input_data.jsonl', fetch: fetched }],
  }),
  advancedif: definePack({
    name: 'advancedif',
    title: 'AdvancedIF (Meta)',
    format: 'advancedif',
    scoring: 'weighted_mean',
    protocol: 'native',
    judge: 'openai:gpt-4.1',
    judgeSource: 'rubricate',
    responses: 'the rows\' own `response`, or --responses FILE',
    files: [{ path: 'advancedif/sample_data.jsonl', sample: 'the 30 published sample rows', fetch: fetched }],
  }),
  researchrubrics: definePack({
    name: 'researchrubrics',
    title: 'ResearchRubrics (Scale AI)',
    format: 'researchrubrics',
    scoring: 'compliance',
    protocol: 'native',
    judge: 'openai:gpt-4.1',
    judgeSource: 'rubricate',
    responses: '--responses FILE ({sample_id, response})',
    files: [{ path: 'researchrubrics/researchrubrics-sample-100.jsonl', sample: '100 tasks', fetch: fetched }],
  }),
  profbench: definePack({
    name: 'profbench',
    title: 'ProfBench (NVIDIA)',
    format: 'profbench',
    scoring: 'profbench',
    protocol: 'native',
    judge: 'openai:gpt-4.1',
    judgeSource: 'rubricate',
    responses: 'the rows\' own `response` (reports)',
    files: [{ path: 'profbench/profbench.jsonl', fetch: { from: 'the nvidia/ProfBench dataset, its report rows as JSONL' } }],
  }),
  prbench: definePack({
    name: 'prbench',
    title: 'PRBench (Scale AI)',
    format: 'prbench',
    scoring: 'prbench_clipped',
    protocol: 'native',
    judge: 'openai:gpt-4.1',
    judgeSource: 'rubricate',
    responses: 'the rows\' own `response_N`, or --responses FILE ({task, response})',
    files: [{ path: 'prbench/prbench.jsonl', fetch: { from: 'the ScaleAI/PRBench dataset, as JSONL' } }],
  }),
  rar: definePack({
    name: 'rar',
    title: 'Rubrics as Rewards (RaR)',
    format: 'rar',
    scoring: 'rar_explicit',
    protocol: 'native',
    judge: 'openai:gpt-4.1',
    judgeSource: 'rubricate',
    responses: '--responses FILE ({id, response})',
    files: [{ path: 'rar/rar-medicine.jsonl', fetch: { from: 'the RaR-Medicine dataset, as JSONL' } }],
    subsets: {
      medicine: [{ path: 'rar/rar-medicine.jsonl', fetch: { from: 'the RaR-Medicine dataset, as JSONL' } }],
      science: [{ path: 'rar/rar-science.jsonl', fetch: { from: 'the RaR-Science dataset, as JSONL' } }],
    },
  }),
  biggen: definePack({
    name: 'biggen',
    title: 'BiGGen-Bench (Prometheus)',
    format: 'biggen',
    scoring: 'biggen',
    protocol: 'prometheus',
    judge: 'openai:gpt-4.1',
    judgeSource: 'rubricate',
    responses: '--responses FILE ({id, response}); the published file\'s own responses are a placeholder ("Hello World!")',
    files: [{ path: 'biggen_bench/sample_responses.json', fetch: fetched }],
  }),
  drb2: definePack({
    name: 'drb2',
    title: 'DeepResearch Bench II',
    format: 'drb2',
    scoring: 'drb2',
    protocol: 'native',
    judge: 'openai:gpt-4.1',
    judgeSource: 'rubricate',
    responses: '--responses FILE ({id, response})',
    files: [{ path: 'deepresearch_bench_ii/tasks_and_rubrics.jsonl', fetch: fetched }],
  }),
  rubrichub: definePack({
    name: 'rubrichub',
    title: 'RubricHub (RuRL split)',
    format: 'rubrichub',
    scoring: 'weighted_mean',
    protocol: 'native',
    judge: 'openai:gpt-4.1',
    judgeSource: 'rubricate',
    responses: '--responses FILE',
    files: [{ path: 'rubrichub/rurl-medical-sample-100.jsonl', sample: '100 medical rows', fetch: fetched }],
    subsets: Object.fromEntries(
      ['medical', 'chat', 'instructionfollowing', 'science', 'writing'].map((area) => [area, [{ path: `rubrichub/rurl-${area}-sample-100.jsonl`, sample: `100 ${area} rows`, fetch: fetched }]]),
    ),
  }),
});


/** A pack and subset as `--benchmark` names them, with the data file it resolves to. */
export interface ResolvedBenchmark {
  pack: BenchmarkPack;
  subset: string | undefined;
  /** `healthbench:consensus`. */
  label: string;
  /** The absolute path of the first present file, or undefined. */
  file: string | undefined;
  /** Which of the candidate files it is (its sample note). */
  candidate: PackFile | undefined;
  candidates: readonly PackFile[];
  dataDirectory: string;
}

/** `NAME[:SUBSET]` to a pack and the data file present for it (if any); unknown names are refused with the known ones. */
export function findBenchmark(spec: string, environment: NodeJS.ProcessEnv = process.env): ResolvedBenchmark {
  const [name, subset, ...rest] = spec.split(':');
  if (rest.length > 0) throw new RubricateError('CONFIG_INVALID', `--benchmark takes NAME or NAME:SUBSET, got "${spec}"`, { field: 'benchmark' });
  const pack = benchmarkPacks.get(name);
  const subsets = pack.subsets ?? {};
  if (subset !== undefined && !Object.hasOwn(subsets, subset)) {
    const known = Object.keys(subsets);
    throw new RubricateError('CONFIG_INVALID', `benchmark ${pack.name} has no subset "${subset}" (${known.length > 0 ? `its subsets: ${known.join(', ')}` : 'it has no subsets'})`, { field: 'benchmark' });
  }
  const candidates = subset === undefined ? pack.files : subsets[subset];
  const directory = dataDirectory(environment);
  const candidate = candidates.find((file) => existsSync(resolve(directory, file.path)));
  return { pack, subset, label: subset === undefined ? pack.name : `${pack.name}:${subset}`, file: candidate && resolve(directory, candidate.path), candidate, candidates, dataDirectory: directory };
}

/** The data file of a benchmark, or the error that says where it should be and how to get it (nothing is downloaded here). */
export function benchmarkDataFile(resolved: ResolvedBenchmark): string {
  if (resolved.file) return resolved.file;
  const wanted = resolved.candidates.map((file) => file.path).join(' or ');
  const fetchable = resolved.candidates.find((file) => file.fetch === true);
  const how = fetchable
    ? `\`npm run data:fetch\` downloads ${fetchable.path} and checks it (RUBRICATE_DATA_DIR=DIR npm run data:fetch for another folder)`
    : `it is not in \`npm run data:fetch\`'s list: get ${resolved.candidates.map((file) => (file.fetch === true ? file.path : file.fetch.from)).join(' or ')}, and save it as ${resolved.candidates[0].path}`;
  throw new RubricateError('INPUT_UNREADABLE', `benchmark ${resolved.label}: its data file (${wanted}) is not in the data folder ${resolved.dataDirectory} (RUBRICATE_DATA_DIR); ${how}`, {
    field: 'benchmark',
    file: resolve(resolved.dataDirectory, resolved.candidates[0].path),
  });
}

/**
 * What a pack sets for a run: the input and its format, and the defaults of the settings the
 * user did not give (flag attribute → value, as commander names them). A command applies
 * `defaults` only where its own option was left unset (see `src/cli/benchmark-options.ts`).
 */
export interface PackSettings {
  input: string;
  format: ItemFormatName;
  defaults: { judge: string[]; scoring: string; judgeProtocol?: JudgeProtocol };
}

export function packSettings(resolved: ResolvedBenchmark): PackSettings {
  const { pack } = resolved;
  if (!itemImporters.has(pack.format)) throw new RubricateError('INTERNAL', `benchmark ${pack.name} names an unknown format ${pack.format}`);
  return {
    input: benchmarkDataFile(resolved),
    format: pack.format,
    defaults: { judge: [pack.judge], scoring: pack.scoring, ...(pack.protocol === 'native' ? {} : { judgeProtocol: pack.protocol }) },
  };
}
