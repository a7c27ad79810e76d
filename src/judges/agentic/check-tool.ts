/**
 * `check`: one of rubricate's deterministic checks (`src/checks/registry.ts`) run on the response,
 * with parameters the judge gives: a code check with tests it writes, an answer compared with
 * one it derived, a regex. The judge supplies every parameter itself: nothing of the item's
 * reference reaches the check or its result. Trajectory checks need the item's parsed
 * trajectory, which a prompt does not carry: the `steps` tool reads the steps instead.
 */
import { RubricateError } from '../../errors.js';
import { checkRegistry, runCheckAsync } from '../../checks/registry.js';
import { trajectoryChecks } from '../../checks/trajectory.js';
import type { CheckOutcome } from '../../checks/types.js';
import { isRecord } from '../../util/is-record.js';
import { lastUserTurn } from './material.js';
import { bounded, responseOf, stringArgument, toolFailed, type AgenticTool } from './tool.js';

const trajectoryTypes = new Set(trajectoryChecks.map((check) => check.type));

function describeOutcome(type: string, outcome: CheckOutcome): string {
  if (outcome.undecided) return `check ${type}: undecided (${outcome.undecided.reason})`;
  const tests = outcome.tests ? `; tests passed ${outcome.tests.passed} of ${outcome.tests.total} (${outcome.tests.ending})` : '';
  return `check ${type}: ${outcome.passed ? 'passed' : 'failed'}${outcome.detail ? ` (${outcome.detail})` : ''}${tests}`;
}

export const checkTool: AgenticTool = {
  name: 'check',
  description:
    'check: runs one of rubricate\'s deterministic checks on the response and says whether it passed. Arguments: "type" (e.g. "code-tests": the response\'s Python code against "tests" you write, run in a sandbox; "answer-equivalent": the response\'s final answer against an "answer" you give, with "domain" math, number, text or choice; "regex" with a "pattern"), "parameters" (an object of the check\'s parameters), and "response" (its label, when the prompt shows several).',
  arguments: ['type', 'parameters', 'response'],
  async run(args, context) {
    const type = stringArgument('check', args, 'type');
    if (trajectoryTypes.has(type)) throw toolFailed('check', `"${type}" reads the item's parsed trajectory, which the judge is not given: read the steps with the steps tool`);
    if (!checkRegistry.find(type)) throw toolFailed('check', checkRegistry.unknown(type).message);
    const parameters = args.parameters ?? {};
    if (!isRecord(parameters)) throw toolFailed('check', 'argument "parameters" must be an object');
    const response = responseOf('check', args, context.material);
    let outcome: CheckOutcome;
    try {
      outcome = await runCheckAsync({ ...parameters, type }, response, { prompt: lastUserTurn(context.material.conversation), mode: 'strict' });
    } catch (error) {
      throw toolFailed('check', RubricateError.isInstance(error) ? `${error.code}: ${error.message}` : String(error));
    }
    const text = bounded(describeOutcome(type, outcome));
    return { text, summary: text.split('\n', 1)[0].slice(0, 200) };
  },
};
