/**
 * τ-bench trajectory files (`historical_trajectories/*.json`): a JSON array of
 * {task_id, trial, reward, info{task{user_id, instruction, actions[{name, kwargs}], outputs[]}}, traj[messages]}.
 * Each record becomes a trajectory item: the agent policy (the system message) is the
 * prompt, the rest of `traj` the response. Its rubric is hybrid:
 * - hard-rule checks derived from the task's expected actions: each expected write call was
 *   made (successfully) with exactly the expected arguments, no other write succeeded, and each
 *   expected output was said to the user;
 * - judge criteria derived from the policy (confirmation before writes, nothing beyond the
 *   tools, one tool call at a time, transfer only when out of scope).
 * τ-bench's outcome reward is kept as `metadata.outcome_reward` (a label for `meta --format outcome`).
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { normalizeTrajectory, trajectoryMessageInputSchema } from '../trajectory/trajectory.js';
import { renderTrajectory } from '../trajectory/render.js';
import { zodErrorToInputError } from '../rubric/normalize.js';
import type { CriterionInput, Item, Message } from '../rubric/schema.js';
import { buildItem, fieldError, invalid, readJsonFile } from './shared.js';
import type { Importer } from './types.js';
import type { ImportRecord } from '../rubric/records.js';
import { isRecord } from '../util/is-record.js';

/** Tools that change the database in τ-bench's airline and retail domains (the rest only read, think or transfer). */
export const tauBenchWriteTools: readonly string[] = [
  'book_reservation',
  'cancel_reservation',
  'update_reservation_flights',
  'update_reservation_baggages',
  'update_reservation_passengers',
  'send_certificate',
  'cancel_pending_order',
  'exchange_delivered_order_items',
  'modify_pending_order_address',
  'modify_pending_order_items',
  'modify_pending_order_payment',
  'modify_user_address',
  'return_delivered_order_items',
];

/** Judge criteria from the τ-bench agent policy; steps are cited by number. */
export const tauBenchPolicyCriteria: CriterionInput[] = [
  {
    id: 'policy_confirmation',
    text: 'Before every write action (booking, modifying, cancelling, or sending a certificate), the agent lists the action details to the user and obtains an explicit "yes" before the tool call. Cite the step of each write call and of the confirmation it relied on.',
    tags: ['tau:confirmation', 'tau:policy'],
  },
  {
    id: 'policy_grounded',
    text: 'The agent gives no information, knowledge or procedures that were not provided by the user or by the tool results, and makes no subjective recommendations. Cite the step of any unsupported statement.',
    tags: ['tau:grounded', 'tau:policy'],
  },
  {
    id: 'policy_one_call',
    text: 'The agent makes one tool call at a time, and never responds to the user in the same turn as a tool call. Cite any step that breaks this.',
    tags: ['tau:one-call', 'tau:policy'],
  },
  {
    id: 'policy_transfer',
    text: 'The agent transfers the user to a human agent only when the request cannot be handled within the scope of its actions (and then says so); it does not transfer a request it could handle, nor refuse one it must transfer. If there is no transfer and none was needed, this is met.',
    tags: ['tau:transfer', 'tau:policy'],
  },
];

const actionSchema = z.object({ name: z.string().min(1), kwargs: z.record(z.string(), z.unknown()).default({}) });
const recordSchema = z.object({
  task_id: z.union([z.number(), z.string()]),
  trial: z.union([z.number(), z.string()]).optional(),
  reward: z.number().optional(),
  info: z.object({
    task: z.object({
      user_id: z.string().optional(),
      instruction: z.string().optional(),
      actions: z.array(actionSchema),
      outputs: z.array(z.string()).default([]),
    }),
    reward_info: z.unknown().optional(),
  }),
  traj: z.array(trajectoryMessageInputSchema).min(2, 'traj needs the policy and at least one message'),
});

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Deterministic hard rules from the expected actions. */
export function tauBenchChecks(actions: ReadonlyArray<{ name: string; kwargs: Record<string, unknown> }>, outputs: readonly string[]): CriterionInput[] {
  const writes = actions.filter((action) => tauBenchWriteTools.includes(action.name));
  const criteria: CriterionInput[] = writes.map((action, index) => ({
    id: `expected_write_${index + 1}`,
    text: `The agent calls ${action.name} successfully with exactly the expected arguments ${JSON.stringify(action.kwargs)}.`,
    kind: 'hard_rule',
    tags: ['tau:expected-write'],
    // τ-bench tools are Python functions: an unknown argument fails the call, extra keys inside nested objects are ignored.
    check: { type: 'tool_args_match', name: action.name, args: action.kwargs, exact: 'top_level', successfulOnly: true },
  }));
  criteria.push({
    id: 'no_other_write',
    text: `The agent makes no write beyond the expected ones: ${writes.length} successful write call(s) in all.`,
    kind: 'hard_rule',
    tags: ['tau:no-other-write'],
    check: { type: 'tool_called', name: [...tauBenchWriteTools], min: writes.length, max: writes.length, successfulOnly: true },
  });
  outputs.forEach((output, index) => {
    criteria.push({
      id: `expected_output_${index + 1}`,
      text: `The agent tells the user "${output}".`,
      kind: 'hard_rule',
      tags: ['tau:expected-output'],
      // τ-bench looks for the output in the agent's messages, ignoring case and commas.
      check: { type: 'message_matches', pattern: escapeRegex(output.replace(/,/g, '')), flags: 'i', scope: 'assistant', stripCharacters: ',' },
    });
  });
  return criteria;
}

/**
 * The field of an expected action whose kwargs hold a "__proto__" key, if any. τ-bench's tools
 * are Python functions and none takes such an argument, and the record schema would drop the key
 * without a word (a check would then test fewer arguments than the task lists): refused instead.
 */
function protoKwargsField(value: unknown): string | undefined {
  const task = isRecord(value) && isRecord(value.info) && isRecord(value.info.task) ? value.info.task : undefined;
  if (!task || !Array.isArray(task.actions)) return undefined;
  const index = task.actions.findIndex((action) => isRecord(action) && isRecord(action.kwargs) && Object.hasOwn(action.kwargs, '__proto__'));
  return index < 0 ? undefined : `info.task.actions[${index}].kwargs.__proto__`;
}

function toItem(value: unknown, file: string, line: number): Item {
  const protoField = protoKwargsField(value);
  if (protoField) throw fieldError('the kwargs key "__proto__" is not allowed (no τ-bench tool takes such an argument)', file, line, protoField);
  const parsed = recordSchema.safeParse(value);
  if (!parsed.success) throw zodErrorToInputError(parsed.error, { file, line });
  const record = parsed.data;
  const [policy, ...rest] = record.traj;
  if (policy.role !== 'system' || typeof policy.content !== 'string') throw fieldError('the first message of traj must be the system policy (a string)', file, line, 'traj[0]');
  const trajectory = normalizeTrajectory(rest, { file, line, fieldPrefix: 'traj', indexOffset: 1 });
  const prompt: Message[] = [{ role: 'system', content: policy.content }];
  const id = `${record.task_id}-${record.trial ?? 0}`;
  const item = buildItem({
    id,
    prompt,
    response: renderTrajectory(trajectory),
    rubric: { id: `tau-${record.task_id}`, gate: 'hard_rules', criteria: [...tauBenchChecks(record.info.task.actions, record.info.task.outputs), ...tauBenchPolicyCriteria] },
    metadata: {
      dataset: 'tau-bench',
      task_id: record.task_id,
      ...(record.trial !== undefined ? { trial: record.trial } : {}),
      ...(record.info.task.user_id !== undefined ? { user_id: record.info.task.user_id } : {}),
      ...(record.reward !== undefined ? { outcome_reward: record.reward } : {}),
      // τ-bench leaves reward_info null when the episode ended in an error: its 0 was not a state comparison.
      outcome_evaluated: record.info.reward_info !== null && record.info.reward_info !== undefined,
    },
    file,
    line,
  });
  if (record.info.task.instruction !== undefined) item.reference = `The simulated user's goal (hidden from the agent): ${record.info.task.instruction}`;
  item.trajectory = trajectory;
  return item;
}

export const tauBenchImporter: Importer = {
  name: 'tau-bench',
  accepts: [],
  defaultScoring: 'weighted_mean',
  description: 'τ-bench trajectories (JSON array of {task_id, trial, reward, info.task{actions, outputs}, traj}): hybrid rubric of expected-action checks and policy criteria; reward kept as metadata.outcome_reward',
  async *read(source): AsyncIterable<ImportRecord> {
    const records = await readJsonFile(source);
    if (!Array.isArray(records)) throw new RubricateError('INPUT_INVALID', 'a τ-bench file is a JSON array of trajectories', { file: source });
    for (let index = 0; index < records.length; index += 1) {
      // A JSON array has no useful line numbers: `line` is the record's 1-based position.
      const line = index + 1;
      try {
        yield { kind: 'item', line, item: toItem(records[index], source, line) };
      } catch (error) {
        const raw = records[index] as { task_id?: unknown; trial?: unknown } | null;
        yield invalid(error, line, raw && typeof raw === 'object' && raw.task_id !== undefined ? `${String(raw.task_id)}-${String(raw.trial ?? 0)}` : undefined);
      }
    }
  },
};
