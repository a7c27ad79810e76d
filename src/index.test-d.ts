/**
 * Type tests of the package's public API, as a user imports it (`rubricate` and its subpath
 * entries). Compiled by `npm run typecheck` (the root tsconfig covers `src/`), never run: each
 * `expectTypeOf` fails to compile when a signature drifts, and each `@ts-expect-error` fails when
 * a wrong call starts to compile.
 */
import { expectTypeOf } from 'vitest';
import {
  Comparer,
  Grader,
  RubricateError,
  createJudge,
  grade,
  gradeFile,
  normalizeItem,
  normalizeRubric,
  parseRunSpec,
  registerJudge,
  scoreFile,
  wrapJudge,
  type CompareOptions,
  type CompareRecord,
  type CompareSummary,
  type ErrorCode,
  type GradeFileOptions,
  type GradeFileOutcome,
  type GradeOutcome,
  type GraderOptions,
  type ImportRecord,
  type Item,
  type Judge,
  type JudgeMiddleware,
  type JudgeBackend,
  type JudgeBuild,
  type Metrics,
  type ResultRecord,
  type Rubric,
  type RunSpec,
  type ScoreFileOptions,
  type ScoreFileOutcome,
  type Scoring,
} from './index.js';
import { createServer, startServer, type CreateServerOptions, type RunningServer, type ServerApp } from './entries/server.js';
import { openReplyStore, type ReplyStore } from './entries/store.js';
import { computeBinaryMeta, type BinaryMetaReport } from './entries/meta.js';
import { createRubricGenerator, type RubricGenerator } from './entries/generation.js';
import { writeReport, type WrittenReport } from './entries/report.js';
import { startFakeJudge, type FakeJudge } from './entries/testing.js';

// grade: plain values in (they are validated), results and metrics out.
expectTypeOf(grade).parameters.toEqualTypeOf<[Iterable<unknown> | AsyncIterable<unknown>, GraderOptions]>();
expectTypeOf(grade).returns.resolves.toEqualTypeOf<GradeOutcome>();
expectTypeOf<GradeOutcome['results']>().toEqualTypeOf<ResultRecord[]>();
expectTypeOf<GradeOutcome['metrics']>().toEqualTypeOf<Metrics>();
expectTypeOf<GraderOptions['judge']>().toEqualTypeOf<Judge | undefined>();
expectTypeOf<GraderOptions['scoring']>().toEqualTypeOf<string | Scoring | undefined>();
// @ts-expect-error an explanation length is one of the plan's names
void grade([], { plan: { explanation: 'verbose' } });
// @ts-expect-error the items come first, the options second
void grade({ judge: undefined as unknown as Judge });

// gradeFile: a grader over import records, written to a results file.
expectTypeOf(gradeFile).parameters.toEqualTypeOf<[GradeFileOptions]>();
expectTypeOf(gradeFile).returns.resolves.toEqualTypeOf<GradeFileOutcome>();
expectTypeOf<GradeFileOptions['grader']>().toEqualTypeOf<Grader>();
expectTypeOf<GradeFileOptions['records']>().toEqualTypeOf<AsyncIterable<ImportRecord>>();
expectTypeOf<GradeFileOutcome['interrupted']>().toEqualTypeOf<boolean>();

// scoreFile: a results file scored again, no judge.
expectTypeOf(scoreFile).parameters.toEqualTypeOf<[string, ScoreFileOptions?]>();
expectTypeOf(scoreFile).returns.resolves.toEqualTypeOf<ScoreFileOutcome>();
expectTypeOf<ScoreFileOutcome['scoring']>().toEqualTypeOf<Scoring>();
// @ts-expect-error the input is a path
void scoreFile(new URL('file:///results.jsonl'));

// Grader: one grader, item by item or as a stream.
expectTypeOf(Grader).constructorParameters.toEqualTypeOf<[GraderOptions]>();
expectTypeOf<Grader['gradeItem']>().toEqualTypeOf<(item: Item) => Promise<ResultRecord>>();
expectTypeOf<Grader['gradeStream']>().toEqualTypeOf<(records: AsyncIterable<ImportRecord>) => AsyncGenerator<ResultRecord>>();
// @ts-expect-error a scoring is a name or a Scoring
void new Grader({ scoring: 3 });

// Comparer: pairs in, compare lines out; the summary builder folds them.
expectTypeOf(Comparer).constructorParameters.toEqualTypeOf<[CompareOptions]>();
expectTypeOf<Comparer['comparePair']>().returns.resolves.toEqualTypeOf<CompareRecord>();
expectTypeOf<Comparer['compareStream']>().returns.toEqualTypeOf<AsyncGenerator<CompareRecord>>();
expectTypeOf<CompareSummary>().toBeObject();

// createJudge: `none` is no judge, a prefixed spec is one.
expectTypeOf(createJudge({ model: 'none' })).resolves.toEqualTypeOf<undefined>();
expectTypeOf(createJudge({ model: 'openai:gpt-4.1-mini' })).resolves.toEqualTypeOf<Judge>();

// wrapJudge: a judge in, a judge out (with a close); a middleware that is not one does not compile.
declare const someJudge: Judge;
expectTypeOf(wrapJudge(someJudge, {})).toMatchTypeOf<Judge & { close(): Promise<void> }>();
expectTypeOf<JudgeMiddleware['wrapComplete']>().parameter(0).toHaveProperty('doComplete');
// @ts-expect-error a middleware has no `complete`: it wraps the inner judge's
wrapJudge(someJudge, { complete: async () => ({ text: '' }) });
// registerJudge: a backend of one's own, declaring what it reads.
expectTypeOf(registerJudge).parameters.toEqualTypeOf<[string, JudgeBackend]>();
expectTypeOf<JudgeBackend['create']>().toEqualTypeOf<(build: JudgeBuild) => Promise<Judge | undefined>>();
// @ts-expect-error a backend declares the settings it reads
registerJudge('mine', { create: async () => undefined });

// The model at the edge: untrusted values in, typed values (or a RubricateError) out.
expectTypeOf(normalizeRubric).returns.toEqualTypeOf<Rubric>();
expectTypeOf(normalizeItem).returns.toEqualTypeOf<Item>();
expectTypeOf(parseRunSpec).returns.toEqualTypeOf<RunSpec>();
expectTypeOf<RubricateError['code']>().toEqualTypeOf<ErrorCode>();
// @ts-expect-error codes are the listed ones
void new RubricateError('NOT_A_CODE', 'message');

// Subpath entries.
expectTypeOf(createServer).parameters.toEqualTypeOf<[CreateServerOptions]>();
expectTypeOf(createServer).returns.toEqualTypeOf<ServerApp>();
expectTypeOf<ServerApp['fetch']>().toBeFunction();
expectTypeOf(startServer).returns.resolves.toEqualTypeOf<RunningServer>();
expectTypeOf(openReplyStore).returns.toExtend<ReplyStore>();
expectTypeOf(computeBinaryMeta).returns.toEqualTypeOf<BinaryMetaReport>();
expectTypeOf(createRubricGenerator).returns.toEqualTypeOf<RubricGenerator>();
expectTypeOf(writeReport).returns.resolves.toEqualTypeOf<WrittenReport>();
expectTypeOf(startFakeJudge).returns.resolves.toEqualTypeOf<FakeJudge>();
