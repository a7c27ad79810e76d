/**
 * `rubricate serve`: the reward service for RL training, on the same grading pipeline as
 * `grade` (one long-lived Grader: cache, in-flight dedupe, retries, checks, any judge).
 * Prints one JSON line with its address on stdout once listening (port 0 picks a free
 * port), logs one JSON line per request on stderr, and on SIGTERM/SIGINT stops accepting,
 * drains in-flight work and exits 0.
 */
import { Option, type Command } from 'commander';
import { pino, type Logger } from 'pino';
import { RubricateError, exitCodes } from '../../errors.js';
import { createJudgePool, type JudgePool } from '../../judges/pool.js';
import type { Judge } from '../../judges/types.js';
import type { Rubric } from '../../rubric/schema.js';
import { getScoring } from '../../scoring/registry.js';
import { resolveAdapters } from '../../server/app.js';
import { defaultMaxBodyBytes } from '../../server/body.js';
import { RewardService, defaultDeadlineMs, defaultMaxQueue } from '../../server/reward-service.js';
import { admissionWarning, defaultWaitingCapacity } from '../../server/admission.js';
import { nullPolicy, parseErrorPolicy, type ErrorPolicy } from '../../server/rewards.js';
import { scoreRoutes } from '../../server/score.js';
import { rlRoutes } from '../../server/rl-routes.js';
import { defaultDrainTimeoutMs, defaultHost, defaultPort, startServer } from '../../server/start.js';
import { organizeHelp } from '../help.js';
import { addConfigOption } from '../config-file.js';
import type { CommandContext } from '../context.js';
import { RedisReplyStore } from '../../store/index.js';
import { addJudgeOptions, buildJudges, gradingFlagGroups, parseNumber, parsePositiveInteger } from '../judge-options.js';
import { loadRubrics } from '../rubrics-file.js';
import { RubricLintGate } from '../../lint/gate.js';
import { createRubricEvolver, type RubricEvolver } from '../../generation/evolver.js';
import { openEvolverStateStore } from '../../store/open-evolver-state.js';
import { createJudge } from '../../judges/registry.js';
import { addModelOptions, modelFromFlags, refuseUnreadModelFlags, runGroupsOf, runSpecFromFlags } from '../run-spec-flags.js';
import { openRunSession, type RunSession, type SessionFlags } from '../session.js';
import { RewardAudit } from '../../server/audit.js';
import { Grader } from '../../pipeline/grader.js';
import { checkFiles, JsonLinesWriter } from '../../util/files.js';
import { canonicalJson } from '../../util/json.js';
import type { Credentials, RunSpec } from '../../spec/run-spec.js';
import { evolvingRubricRoutes } from '../../server/evolving-rubrics.js';
import { distillRoutes, type DistillRouteOptions } from '../../server/distill.js';
import { createRubricGenerator } from '../../generation/generator.js';
import { madeUpBy } from '../../util/made-up.js';
import { redactDeep } from '../../util/redact.js';

interface ServeFlags extends SessionFlags {
  /** `--lint`: refuse requests (and a --rubrics file, at start) whose rubrics have lint errors. */
  lint?: boolean;
  /** Repeated (or comma-separated) for a pool of replicas. */
  judgeBaseUrl?: string[];
  port: number;
  host: string;
  token?: string;
  onError: ErrorPolicy;
  maxBodyBytes: number;
  deadline: number;
  maxQueue: number;
  maxWaiting: number;
  expectedStepSize?: number;
  logLevel: string;
  rubrics?: string;
  adapters?: string;
  drainTimeout: number;
  poolCooldown: number;
  allowOrigin?: string[];
  evolveStore?: string;
  evolveTopK: number;
  generator?: string;
  auditJudge?: string;
  auditShare?: number;
  auditLog?: string;
  auditMinAgreement?: number;
  auditMaxGap?: number;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new RubricateError('CONFIG_INVALID', `--port must be an integer from 0 to 65535, got "${value}"`, { field: 'port' });
  return port;
}

function collectList(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')];
}

function parseNonNegativeInteger(field: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 0) throw new RubricateError('CONFIG_INVALID', `--${field} must be an integer ≥ 0, got "${value}"`, { field });
    return parsed;
  };
}

const defaultAuditShare = 0.05;
const defaultAuditMinAgreement = 0.8;

function parseShare(value: string): number {
  const share = Number(value);
  if (!Number.isFinite(share) || share < 0 || share > 1 || value.trim() === '') throw new RubricateError('CONFIG_INVALID', `expected a number from 0 to 1, got "${value}"`, { field: 'audit-share' });
  return share;
}

/** The reward-hacking monitor's audit judge and figures, when `--audit-judge` is given (its settings refused without it). */
async function openAudit(flags: ServeFlags, spec: RunSpec, session: RunSession, logger: Logger): Promise<{ audit: RewardAudit; log: JsonLinesWriter | undefined } | undefined> {
  if (flags.auditJudge === undefined) {
    const stray = (['auditShare', 'auditLog', 'auditMinAgreement', 'auditMaxGap'] as const).find((flag) => flags[flag] !== undefined);
    if (stray) throw new RubricateError('CONFIG_INVALID', `--${stray.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)} sets the reward-hacking monitor: add --audit-judge or leave it out`, { field: 'audit-judge' });
    return undefined;
  }
  const model = modelFromFlags(flags, 'audit');
  refuseUnreadModelFlags(model.models, model.credentials, 'audit');
  // The same model at the same endpoint would answer from the policy judge's own cached replies: agreement by construction.
  if (canonicalJson(model.models[0]) === canonicalJson(spec.judges[0] ?? {})) throw new RubricateError('CONFIG_INVALID', '--audit-judge is the policy judge itself: audit with another model or endpoint', { field: 'audit-judge' });
  const judge = await createJudge(model.models[0], model.credentials);
  if (!judge) throw new RubricateError('CONFIG_INVALID', '--audit-judge none has nothing to audit with: name a model', { field: 'audit-judge' });
  session.adopt(judge);
  const log = flags.auditLog ? new JsonLinesWriter(flags.auditLog) : undefined;
  // The same plan, store and scoring as the policy judge: only the judge differs (its cache keys are its own).
  const grader = new Grader({ ...session.graderOptions(), judges: [judge], judge, scoring: spec.scoring.name, omitText: true });
  return {
    audit: new RewardAudit({ grader, share: flags.auditShare ?? defaultAuditShare, minAgreement: flags.auditMinAgreement ?? defaultAuditMinAgreement, ...(flags.auditMaxGap !== undefined ? { maxRewardGap: flags.auditMaxGap } : {}), ...(log ? { log } : {}), logger }),
    log,
  };
}

function collectUrls(value: string, previous: string[] | undefined): string[] {
  const urls = value
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
  return [...(previous ?? []), ...urls];
}

export function registerServeCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('serve')
    .description('serve rubric rewards over HTTP for RL trainers (native API, OpenRLHF, slime, Vertex, NeMo Gym)')
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, defaultPort)
    .option('--host <host>', 'interface to listen on (0.0.0.0 to serve other machines)', defaultHost)
    .option('--token <token>', 'bearer token required on every route but /healthz (default: RUBRICATE_TOKEN)')
    .option('--allow-origin <origins>', 'web origins or host names accepted in Host/Origin headers besides the bind address; repeat or comma-separate', collectList)
    .option('--on-error <policy>', 'reward of a failed item: "null" (default) or "fallback=X" (a flagged number)', parseErrorPolicy, nullPolicy)
    .option('--max-body-bytes <n>', 'largest request body accepted (413 beyond)', parsePositiveInteger('max-body-bytes'), defaultMaxBodyBytes)
    .option('--deadline <seconds>', 'per-request deadline (504, or flagged fallbacks for OpenRLHF)', parseNumber('deadline', 0.001), defaultDeadlineMs / 1000)
    .option('--max-queue <n>', 'items admitted at once (waiting for the judge + in flight); beyond it, 503 with Retry-After', parsePositiveInteger('max-queue'), defaultMaxQueue)
    .option('--max-waiting <n>', 'items of trainer requests (OpenRLHF, slime, Vertex, later parts of big batches) that may wait for room; beyond it, 503 with Retry-After', parseNonNegativeInteger('max-waiting'), defaultWaitingCapacity)
    .option('--expected-step-size <n>', 'responses a trainer sends in one step (per-sample trainers send them all at once): warns at start-up when --max-queue + --max-waiting is smaller', parsePositiveInteger('expected-step-size'))
    .addOption(new Option('--log-level <level>', 'request log level').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'))
    .option('--rubrics <file>', 'rubrics (JSONL or JSON list, each with an id) that requests may name by rubric_id')
    .option('--lint', 'lint every rubric a request brings (once per rubric) and refuse the request on lint errors (422 RUBRIC_LINT_FAILED); a --rubrics file with lint errors stops the start')
    .option('--adapters <names>', 'trainer adapters to serve, comma-separated (default: openrlhf,slime,vertex,nemo-gym,carr)')
    .option('--drain-timeout <seconds>', 'longest a graceful shutdown waits for in-flight work', parseNumber('drain-timeout', 0), defaultDrainTimeoutMs / 1000)
    .option('--pool-cooldown <seconds>', 'how long an unreachable judge endpoint of a pool is left out (doubles on repeats)', parseNumber('pool-cooldown', 0.001), 5)
    .option('--evolve-store <file|url>', 'serve evolving rubrics (/v1/rubrics/…), keeping their active sets and history in this SQLite file, or in Redis/Valkey (redis://… or rediss://…) shared by every replica')
    .option('--evolve-top-k <n>', 'evolving criteria kept active per prompt, the most discriminating first', parsePositiveInteger('evolve-top-k'), 5)
    .option('--audit-share <fraction>', `with --audit-judge: share of answered items graded again by it (default ${defaultAuditShare})`, parseShare)
    .option('--audit-log <file>', 'with --audit-judge: one JSON line per audited item and per warning (written whole at shutdown)')
    .option('--audit-min-agreement <ratio>', `with --audit-judge: a step whose criterion agreement falls below this logs a warning (default ${defaultAuditMinAgreement})`, parseShare)
    .option('--audit-max-gap <reward>', 'with --audit-judge: a step whose mean |policy − audit| reward exceeds this logs a warning', parseNumber('audit-max-gap', 0));
  // The item score is the reward (default weighted_mean); the generator proposes evolving criteria (--evolve-store) and distils rubrics (POST /v1/rubrics/distill).
  addJudgeOptions(command, [...gradingFlagGroups, 'agentic']);
  addModelOptions(command, 'generator');
  addModelOptions(command, 'audit');
  // `serve` accepts several judge endpoints (replicas of one model): repeat the flag or separate with commas.
  const baseUrlOption = command.options.find((option) => option.long === '--judge-base-url');
  if (baseUrlOption) {
    baseUrlOption.description = 'OpenAI-compatible base URL; repeat (or comma-separate) for a pool of replicas (default: OPENAI_BASE_URL)';
    baseUrlOption.argParser(collectUrls);
  }
  addConfigOption(command);
  organizeHelp(command, [
    'rubricate serve --port 8000 --judge openai:gpt-4.1-mini --token "$RUBRICATE_TOKEN"',
    'rubricate serve --port 8000 --judge scripted   # rewards from the scripted judge, to test a trainer\'s wiring',
  ]);
  command.action(async (flags: ServeFlags, self: Command) => {
    // Several --judge-base-url are replicas of one judge: the spec holds one endpoint, the pool the rest.
    const { judgeBaseUrl: replicas = [], ...rest } = flags;
    const spec = runSpecFromFlags({ ...rest, ...(replicas.length === 1 ? { judgeBaseUrl: replicas[0] } : {}) }, (attribute) => self.getOptionValueSource(attribute) === 'default', runGroupsOf(self));
    context.exitCode = await runServe(flags, { ...spec, scoring: { ...spec.scoring, name: spec.scoring.name ?? 'weighted_mean' } }, replicas.length > 1 ? replicas : [], context);
  });
}

/** A pool of replicas of one judge, one per --judge-base-url. */
async function buildReplicaPool(spec: RunSpec, credentials: Credentials, replicas: string[], poolCooldown: number, onPoolEvent: (event: unknown) => void): Promise<JudgePool> {
  if (spec.judges.length > 1) {
    throw new RubricateError('CONFIG_INVALID', 'several --judge-base-url replicas serve one judge: give a single --judge with them', { field: 'judge-base-url' });
  }
  const model = spec.judges[0] ?? {};
  const members: Judge[] = [];
  for (const baseUrl of replicas) {
    const [judge] = await buildJudges({ ...spec, judges: [{ ...model, endpoint: { ...model.endpoint, baseUrl } }] }, credentials, {});
    if (!judge || !judge.provenance.baseUrl) throw new RubricateError('CONFIG_INVALID', 'several --judge-base-url need an HTTP judge (--judge openai:MODEL)', { field: 'judge-base-url' });
    members.push(judge);
  }
  return createJudgePool(members, { cooldownMs: Math.round(poolCooldown * 1000), onEvent: onPoolEvent });
}

/** What a serving run holds open: closed together, whichever way the run ends. */
interface ServeRun {
  flags: ServeFlags;
  context: CommandContext;
  spec: RunSpec;
  logger: Logger;
  session: RunSession;
  /** The replicas of one judge, one per --judge-base-url (none for a single endpoint). */
  pool: JudgePool | undefined;
  monitor?: { audit: RewardAudit; log: JsonLinesWriter | undefined };
  evolver?: RubricEvolver;
  distill?: DistillRouteOptions;
}

async function runServe(flags: ServeFlags, spec: RunSpec, replicas: string[], context: CommandContext): Promise<number> {
  getScoring(spec.scoring.name!);
  const adapters = resolveAdapters(flags.adapters?.split(',').map((name) => name.trim()).filter((name) => name !== ''));
  const destination = pino.destination({ dest: 2, sync: false });
  const logger = createServeLogger(flags.logLevel, destination);
  checkFiles({ inputs: [{ flag: 'rubrics', path: flags.rubrics }], outputs: [{ flag: 'audit-log', path: flags.auditLog }] });
  let rubrics: Map<string, Rubric> | undefined;
  if (flags.rubrics) rubrics = await loadRubrics(flags.rubrics);
  // Before any judge or port is opened: a rubrics file that cannot score stops the start.
  if (flags.lint && rubrics) new RubricLintGate().refuse(rubrics.values());
  warnOfAdmissionSizing(flags, logger, context);
  const run = await openServeSession(flags, spec, replicas, context, logger);
  await openMonitorAndEvolver(run);
  const running = await startRewardServer(run, rubrics, adapters);
  const routes = [...scoreRoutes, ...rlRoutes, ...adapters.flatMap((adapter) => adapter.routes), ...(run.evolver ? evolvingRubricRoutes : []), ...(run.distill ? distillRoutes : []), '/healthz', '/metrics'];
  context.stdout(JSON.stringify({ event: 'listening', url: running.url, host: running.host, port: running.port, pid: process.pid, routes }));
  const judges = run.session.judges;
  logger.info({ url: running.url, judge: judges[0]?.provenance.id ?? 'none', endpoints: run.pool?.size ?? (judges.length > 0 ? 1 : 0) }, 'listening');
  const signalName = await terminationSignal(context.signal);
  logger.info({ signal: signalName }, 'draining');
  const { drained } = await running.close();
  await closeServeRun(run);
  logger.info({ drained }, 'stopped');
  try {
    destination.flushSync();
  } catch {
    // Nothing buffered, or stderr already gone: no log line is worth failing the exit for.
  }
  context.stdout(JSON.stringify({ event: 'stopped', drained }));
  return drained ? exitCodes.success : exitCodes.interrupted;
}

/** JSON log lines on stderr, through the same redaction as every other output. */
function createServeLogger(level: string, destination: ReturnType<typeof pino.destination>): Logger {
  return pino(
    {
      level,
      base: { service: 'rubricate' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Log lines go through the same redaction as every other output.
      formatters: { log: (object) => redactDeep(object) },
      serializers: { err: (error: Error) => redactDeep(pino.stdSerializers.err(error)) },
    },
    destination,
  );
}

/** A trainer step that cannot fit in the admission queue and its waiting line: said in the log and on stderr. */
function warnOfAdmissionSizing(flags: ServeFlags, logger: Logger, context: CommandContext): void {
  const sizing = admissionWarning(flags.maxQueue, flags.maxWaiting, flags.expectedStepSize);
  if (!sizing) return;
  logger.warn({ maxQueue: flags.maxQueue, maxWaiting: flags.maxWaiting, expectedStepSize: flags.expectedStepSize }, 'a trainer step does not fit in the admission queue and its waiting line');
  context.stderr(`WARNING: ${sizing}`);
}

/** The judges' session: with several --judge-base-url, one judge pooled over its replicas. */
async function openServeSession(flags: ServeFlags, spec: RunSpec, replicas: string[], context: CommandContext, logger: Logger): Promise<ServeRun> {
  const credentials = modelFromFlags(flags, 'judge').credentials;
  let pool: JudgePool | undefined;
  const onPoolEvent = (event: unknown) => logger.warn({ pool: event }, 'judge pool');
  // A server answers 503 at once while a Redis store is away, rather than holding requests.
  const session = await openRunSession(spec, credentials, flags, {
    context,
    failFast: true,
    ...(replicas.length > 0 ? { judges: async () => [(pool = await buildReplicaPool(spec, credentials, replicas, flags.poolCooldown, onPoolEvent))] } : {}),
  });
  const replicaPool: JudgePool | undefined = pool;
  return { flags, context, spec, logger, session, pool: replicaPool };
}

/** The reward-hacking monitor (--audit-judge) and the evolving rubrics (--evolve-store); on a failure everything opened so far is closed. */
async function openMonitorAndEvolver(run: ServeRun): Promise<void> {
  const { flags, spec, session, logger } = run;
  try {
    run.monitor = await openAudit(flags, spec, session, logger);
    const generatorJudge = flags.evolveStore || flags.generator ? await openGeneratorModel(run) : undefined;
    if (generatorJudge && flags.evolveStore) await openEvolver(run, generatorJudge, flags.evolveStore);
    if (generatorJudge && flags.generator) run.distill = distillOptions(run, generatorJudge);
  } catch (error) {
    await closeServeRun(run);
    throw error;
  }
}

/** The model behind --generator (evolving rubrics and distillation), adopted by the session so that it closes with it. */
async function openGeneratorModel(run: ServeRun): Promise<Judge> {
  const { flags, session } = run;
  const generator = modelFromFlags(flags, 'generator');
  refuseUnreadModelFlags(generator.models, generator.credentials, 'generator');
  const generatorJudge = await createJudge(generator.models[0], generator.credentials);
  if (!generatorJudge) throw new RubricateError('CONFIG_INVALID', `${flags.evolveStore ? '--evolve-store' : '--generator'} needs a generator model (--generator openai:MODEL or gguf:…)`, { field: 'generator' });
  session.adopt(generatorJudge);
  return generatorJudge;
}

/** The evolver over the generator model, its store ready. */
async function openEvolver(run: ServeRun, generatorJudge: Judge, evolveStore: string): Promise<void> {
  // A Redis store answers 503 at once while it is away, as the reply store does.
  run.evolver = createRubricEvolver({ generator: generatorJudge, store: openEvolverStateStore(evolveStore, { failFast: true }), topK: run.flags.evolveTopK });
  await run.evolver.ready();
}

/** `POST /v1/rubrics/distill` with `--generator`: the generator settings `generate --distill` uses by default, so both distil alike. */
function distillOptions(run: ServeRun, generatorJudge: Judge): DistillRouteOptions {
  const generator = createRubricGenerator({ generator: generatorJudge, maxAttempts: 4, timeoutMs: 300_000, concurrency: run.spec.calls.concurrency });
  const scripted = [generatorJudge, ...run.session.judges].map((judge) => madeUpBy(judge.provenance)).find((by) => by !== undefined);
  return { generator, ...(scripted ? { madeUpBy: scripted } : {}) };
}

/** The reward service over the session's judges, listening; on a failure everything opened is closed. */
async function startRewardServer(run: ServeRun, rubrics: Map<string, Rubric> | undefined, adapters: ReturnType<typeof resolveAdapters>): Promise<Awaited<ReturnType<typeof startServer>>> {
  const { flags, spec, session, monitor, evolver, distill, logger, context } = run;
  const replicaPool = run.pool;
  try {
    const service = new RewardService({
      grading: session.graderOptions(),
      maxQueue: flags.maxQueue,
      maxWaiting: flags.maxWaiting,
      deadlineMs: Math.round(flags.deadline * 1000),
      onError: flags.onError,
      rubrics,
      lint: flags.lint,
      ...(monitor ? { audit: monitor.audit } : {}),
      // Remembered results would outlive replies that expire.
      ...(spec.cacheTtlMs !== undefined ? { rememberedResults: 0 } : {}),
      ...(replicaPool ? { judgeEndpoints: () => replicaPool.status() } : {}),
      ...(session.store instanceof RedisReplyStore ? { storeHealth: () => (session.store as RedisReplyStore).connection.health() } : {}),
    });
    return await startServer({
      service,
      port: flags.port,
      host: flags.host,
      token: flags.token ?? (process.env.RUBRICATE_TOKEN || undefined),
      maxBodyBytes: flags.maxBodyBytes,
      logger,
      adapters: adapters.map((adapter) => adapter.name),
      drainTimeoutMs: Math.round(flags.drainTimeout * 1000),
      allowOrigins: flags.allowOrigin,
      onWarning: (message) => context.stderr(message),
      ...(evolver ? { evolver } : {}),
      ...(distill ? { distill } : {}),
    });
  } catch (error) {
    await closeServeRun(run);
    throw error;
  }
}

/** Resolves with the signal that stops the server: SIGTERM, or the CLI's interrupt (SIGINT). */
function terminationSignal(signal: AbortSignal): Promise<string> {
  return new Promise<string>((resolve) => {
    const onTerminate = () => resolve('SIGTERM');
    process.once('SIGTERM', onTerminate);
    const onAbort = () => {
      process.off('SIGTERM', onTerminate);
      resolve('SIGINT');
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Everything the run opened, in reverse: audits under way get the drain timeout to finish and the audit log is written whole, then the evolver and the session. */
async function closeServeRun(run: ServeRun): Promise<void> {
  const { monitor, evolver, session, flags } = run;
  if (monitor) {
    // Audits under way get the drain timeout to finish; the log is then written whole.
    await Promise.race([monitor.audit.idle(), new Promise((resolve) => setTimeout(resolve, flags.drainTimeout * 1000).unref())]);
    await monitor.log?.close();
  }
  await evolver?.close();
  await session.close();
}
