/**
 * MultiChallenge tasks as NeMo Gym's `multichallenge` resources server reads them: a conversation
 * and a rubric of yes/no questions about the final assistant response, each with the answer that
 * passes (`pass_criteria`, "YES" by default) and a weight (default 1). Two layouts are read:
 *
 * - NeMo Gym's JSONL: `{uuid, task_id, responses_create_params: {input: [messages]}, rubric, context, metadata}`;
 * - the raw task: `{metadata: {taskId, …}, system?, messages, rubric, ground_truth_answer?}` (its `thinking` turns are left out, as NeMo Gym's preprocessing leaves them).
 *
 * The graded response is the record's `response`, a `--responses` line with its id (uuid, task_id
 * or metadata.taskId), or the conversation's last message when it is an assistant's. Each question
 * becomes a criterion on the last turn; a question whose passing answer is NO carries the tag
 * `pass_criteria:NO`, which the `multichallenge` scorings read. Item tags: `topic:` and
 * `challenge:` from the metadata. An empty rubric is an invalid record (the reference would score
 * it 0 without asking anything).
 */
import { z } from 'zod';
import { passesOnNoTag } from '../scoring/multichallenge.js';
import { freeObjectSchema, type Message } from '../rubric/schema.js';
import { buildItem, importExamples, parsedExamples } from './shared.js';
import type { Importer } from './types.js';

const messageSchema = z.object({ role: z.string().min(1), content: z.string() });
const questionSchema = z.object({
  question: z.string().trim().min(1, 'a rubric question must not be empty'),
  pass_criteria: z.string().optional(),
  weight: z.number().refine(Number.isFinite, { message: 'must be a finite number' }).min(0).optional(),
});
const identifier = z.union([z.string().min(1), z.number()]);

const taskSchema = z
  .looseObject({
    uuid: identifier.optional(),
    task_id: identifier.optional(),
    responses_create_params: z.looseObject({ input: z.array(messageSchema).min(1) }).optional(),
    system: z.string().nullable().optional(),
    messages: z.array(messageSchema).min(1).optional(),
    rubric: z.array(questionSchema).min(1, 'a MultiChallenge task needs at least one rubric question'),
    metadata: freeObjectSchema.optional(),
    response: z.string().optional(),
  })
  .refine((task) => task.responses_create_params !== undefined || task.messages !== undefined, { message: 'a task needs its conversation: responses_create_params.input or messages', path: ['messages'] });

type Task = z.infer<typeof taskSchema>;

function taskId(task: Task, line: number): string {
  const id = task.uuid ?? task.task_id ?? task.metadata?.taskId;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : `multichallenge-${line}`;
}

/** The conversation without `thinking` turns; the raw layout's system prompt first. */
function conversationOf(task: Task): Message[] {
  const messages = task.responses_create_params?.input ?? [...(task.system ? [{ role: 'system', content: task.system }] : []), ...(task.messages ?? [])];
  return messages.filter((message) => message.role !== 'thinking').map((message) => ({ role: message.role, content: message.content }));
}

/** The prompt and the response: a given response, else a final assistant turn of the conversation. */
function split(task: Task, response: string | undefined): { prompt: Message[]; response: string | undefined } {
  const conversation = conversationOf(task);
  if (response !== undefined) return { prompt: conversation, response };
  const last = conversation.at(-1);
  if (last?.role === 'assistant') return { prompt: conversation.slice(0, -1), response: last.content };
  return { prompt: conversation, response: undefined };
}

function tagsOf(task: Task): string[] {
  return ['topic', 'challenge'].flatMap((field) => (typeof task.metadata?.[field] === 'string' ? [`${field}:${task.metadata[field] as string}`] : []));
}

export const multichallengeImporter: Importer = {
  name: 'multichallenge',
  accepts: ['responses'],
  defaultScoring: 'multichallenge',
  description: "MultiChallenge tasks (NeMo Gym's JSONL or the raw task): a conversation and yes/no questions about the final response, each with its passing answer and weight",
  read(file, options) {
    return importExamples({
      examples: parsedExamples(file, taskSchema, taskId),
      file,
      importOptions: options,
      responseKeyFields: ['uuid', 'task_id', 'id'],
      ownResponse: (task) => split(task, task.response).response,
      makeItem: (task, response, id, line) =>
        buildItem({
          id,
          // A response given apart (the record's, a --responses line) follows the whole conversation; else the conversation ends with it.
          prompt: task.response === undefined && !options.responses ? split(task, undefined).prompt : conversationOf(task),
          response,
          rubric: {
            criteria: task.rubric.map((entry) => ({
              text: entry.question,
              points: entry.weight ?? 1,
              tags: entry.pass_criteria?.trim().toUpperCase() === 'NO' ? [passesOnNoTag] : [],
            })),
          },
          tags: tagsOf(task),
          ...(task.metadata ? { metadata: task.metadata } : {}),
          file,
          line,
        }),
    });
  },
};
