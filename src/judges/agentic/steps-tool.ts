/**
 * `steps`: the numbered steps of an agent trajectory the response renders (`trajectory/render.ts`),
 * read back exactly by their markers, a range at a time: what the agent did, the tools it called
 * and what they returned, for a judge whose prompt shows only an excerpt or that wants a step alone.
 */
import { parseRenderedTrajectory, type RenderedStep } from '../../trajectory/render.js';
import { bounded, optionalInteger, responseOf, toolFailed, type AgenticTool } from './tool.js';

/** Steps one call reads at most. */
export const maxStepsPerCall = 20;

function stepText(text: string, step: RenderedStep): string {
  const label = step.kind === 'tool_call' || step.kind === 'tool_result' ? `${step.kind.replace('_', ' ')}${step.toolName ? ` ${step.toolName}` : ''}` : step.kind;
  return `[step ${step.number}] ${label}:\n${text.slice(step.bodyStart, step.bodyEnd)}`;
}

export const stepsTool: AgenticTool = {
  name: 'steps',
  description: `steps: reads steps of the agent trajectory the response records, by number. Arguments: "from" and "to" (step numbers, inclusive; at most ${maxStepsPerCall} steps a call; default the first ${maxStepsPerCall}), and "response" (its label, when the prompt shows several).`,
  arguments: ['from', 'to', 'response'],
  async run(args, context) {
    const response = responseOf('steps', args, context.material);
    const steps = parseRenderedTrajectory(response);
    if (!steps) throw toolFailed('steps', 'the response is not an agent trajectory');
    const from = optionalInteger('steps', args, 'from', 1, steps.length) ?? 1;
    const to = optionalInteger('steps', args, 'to', from, steps.length) ?? Math.min(steps.length, from + maxStepsPerCall - 1);
    if (to - from + 1 > maxStepsPerCall) throw toolFailed('steps', `at most ${maxStepsPerCall} steps a call (asked ${from} to ${to})`);
    const shown = steps.slice(from - 1, to);
    const text = bounded(`${steps.length} steps in all; steps ${from} to ${to}:\n\n${shown.map((step) => stepText(response, step)).join('\n\n')}`);
    return { text, summary: `steps ${from}-${to} of ${steps.length}` };
  },
};
