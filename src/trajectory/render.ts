/**
 * The judge's view of a trajectory: numbered steps, one per paragraph, each naming what it
 * is (user, assistant, tool call with its arguments, tool result). Nothing is shortened
 * unless `maxResultCharacters` asks for it, and then the cut is marked in the text. Steps
 * are separated by blank lines so evidence mode (long responses) chunks on step boundaries
 * and quotes whole steps.
 */
import { trajectorySteps, type Trajectory, type TrajectoryStep } from './trajectory.js';

export interface RenderTrajectoryOptions {
  /** Longest tool result kept whole; longer ones are cut with an explicit marker. Default: no limit. */
  maxResultCharacters?: number;
}

function argumentsText(value: unknown): string {
  return JSON.stringify(value ?? {});
}

function truncated(text: string, limit: number | undefined): string {
  if (limit === undefined || text.length <= limit) return text;
  return `${text.slice(0, limit)} [… truncated: ${text.length - limit} more characters of ${text.length} not shown]`;
}

export function renderStep(step: TrajectoryStep, options: RenderTrajectoryOptions = {}): string {
  const label = `[step ${step.number}]`;
  switch (step.kind) {
    case 'tool_call':
      return `${label} tool call ${step.toolName}(${argumentsText(step.toolArguments)})`;
    case 'tool_result':
      return `${label} tool result ${step.toolName ?? ''}: ${truncated(step.text, options.maxResultCharacters)}`;
    case 'reasoning':
      return `${label} assistant reasoning: ${step.text}`;
    default:
      return `${label} ${step.kind}: ${step.text}`;
  }
}

/** The rendering of a whole trajectory, used as the item's response text. */
export function renderTrajectory(trajectory: Trajectory, options: RenderTrajectoryOptions = {}): string {
  return trajectorySteps(trajectory)
    .map((step) => renderStep(step, options))
    .join('\n\n');
}
