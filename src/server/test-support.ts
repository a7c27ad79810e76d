/**
 * Shared set-up for the server tests: a scripted loopback judge, the real OpenAI-compatible
 * judge client pointed at it, a reward service and the Hono app. Verdicts follow a rule the
 * tests can compute by hand: a criterion is met when the response contains the criterion's
 * last word.
 */
import { createOpenAICompatibleJudge } from '../judges/openai/openai-judge.js';
import { startFakeJudge, binaryVerdict, type FakeJudge, type FakeJudgeScript } from '../testing/fake-judge.js';
import { createServerApp, type ServerAppOptions } from './app.js';
import type { ServerApp } from './context.js';
import { RewardService, type RewardServiceOptions } from './reward-service.js';

export const fruitRubric = {
  criteria: [
    { id: 'apples', text: 'mentions apples', points: 3 },
    { id: 'pears', text: 'mentions pears', points: 1 },
    { id: 'rotten', text: 'mentions rotten', points: -2 },
  ],
};

/** The rule the scripted judge applies. */
export function criterionMet(criterionText: string, response: string): boolean {
  const keyword = criterionText.trim().split(/\s+/).at(-1)!.toLowerCase();
  return response.toLowerCase().includes(keyword);
}

/** The weighted_mean score of `fruitRubric` for a response, by hand: Σ met points ÷ 4. */
export function fruitScore(response: string): number {
  let achieved = 0;
  for (const criterion of fruitRubric.criteria) if (criterionMet(criterion.text, response)) achieved += criterion.points;
  return achieved / 4;
}

export const ruleScript: FakeJudgeScript = (request) => ({ content: binaryVerdict(criterionMet(request.criteria[0]?.text ?? '', request.response ?? '')) });

/**
 * A reply whose JSON body the test reads in its assertions: Node's `Response.json()` is
 * `unknown`, and typing each answer would restate what the assertions check.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TestResponse = Omit<Response, 'json'> & { json(): Promise<any> };

export interface TestServer {
  fake: FakeJudge;
  service: RewardService;
  app: ServerApp;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  close(): Promise<void>;
}

export async function startTestServer(
  options: { script?: FakeJudgeScript; service?: Partial<RewardServiceOptions>; app?: Partial<ServerAppOptions> } = {},
): Promise<TestServer> {
  const fake = await startFakeJudge(options.script ?? ruleScript);
  const judge = createOpenAICompatibleJudge({ model: 'fake-judge', baseUrl: fake.baseUrl });
  const { grading, ...serviceOptions } = options.service ?? {};
  const service = new RewardService({
    ...serviceOptions,
    grading: { judge, ...grading, calls: { retryBaseDelayMs: 5, maxAttempts: 2, ...grading?.calls } },
  });
  const app = createServerApp({ service, ...options.app });
  return {
    fake,
    service,
    app,
    post: async (path, body, headers = {}) =>
      app.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
    async close() {
      await service.idle(5_000);
      await judge.close();
      await fake.close();
    },
  };
}
