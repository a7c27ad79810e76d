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

/**
 * Where each step's "[step N]" header starts in the rendering (UTF-16 offsets). Results keep
 * them, so a view finds the steps exactly even when a message quotes a header.
 */
export function renderedStepOffsets(trajectory: Trajectory, options: RenderTrajectoryOptions = {}): { text: string; offsets: number[] } {
  const offsets: number[] = [];
  let text = '';
  for (const step of trajectorySteps(trajectory)) {
    if (offsets.length > 0) text += '\n\n';
    offsets.push(text.length);
    text += renderStep(step, options);
  }
  return { text, offsets };
}

export type RenderedStepKind = TrajectoryStep['kind'];

/** One step found in a rendering: what it is and where its body (text, arguments or result) sits in the text. */
export interface RenderedStep {
  number: number;
  kind: RenderedStepKind;
  toolName?: string;
  /** The body is `text.slice(bodyStart, bodyEnd)`: a call's arguments, a result, a message's text. */
  bodyStart: number;
  bodyEnd: number;
}

const stepHeader = /(?:^|\n\n)\[step (\d+)\] (tool call |tool result |assistant reasoning: |system: |user: |assistant: )/g;
const headerAt = /^\[step (\d+)\] (tool call |tool result |assistant reasoning: |system: |user: |assistant: )/;

type Header = { number: number; start: number; headerEnd: number; label: string };

/** Headers at the offsets a results line recorded; null when they do not match the text. */
function headersAtOffsets(text: string, offsets: readonly number[]): Header[] | null {
  const headers: Header[] = [];
  for (const offset of offsets) {
    const previous = headers.at(-1);
    if (!Number.isInteger(offset) || offset < 0 || offset >= text.length || (previous ? offset < previous.headerEnd + 2 || text.slice(offset - 2, offset) !== '\n\n' : offset !== 0)) return null;
    const match = headerAt.exec(text.slice(offset, offset + 60));
    if (!match || Number(match[1]) !== headers.length + 1) return null;
    headers.push({ number: headers.length + 1, start: offset, headerEnd: offset + match[0].length, label: match[2] });
  }
  return headers.length > 0 ? headers : null;
}

/**
 * Reads a rendering (what `renderTrajectory` wrote, as results keep it) back into its steps,
 * for views that show steps apart (the HTML report). With the step offsets a results line
 * records, the steps are exact. Without them (older results), headers must number 1, 2, 3…
 * in order, so a "[step 7]" quoted inside a message mostly stays part of that message; a
 * message quoting the very next header is read as that step. Null when the text is not a
 * rendering (it does not open with "[step 1]").
 */
export function parseRenderedTrajectory(text: string, offsets?: readonly number[]): RenderedStep[] | null {
  const recorded = offsets && offsets.length > 0 ? headersAtOffsets(text, offsets) : null;
  const headers: Header[] = recorded ?? [];
  if (!recorded) for (const match of text.matchAll(stepHeader)) {
    const number = Number(match[1]);
    if (number !== headers.length + 1) continue;
    const start = match.index + (match[0].startsWith('\n\n') ? 2 : 0);
    headers.push({ number, start, headerEnd: match.index + match[0].length, label: match[2] });
  }
  if (headers.length === 0 || headers[0].start !== 0) return null;
  return headers.map((header, index): RenderedStep => {
    const end = index + 1 < headers.length ? headers[index + 1].start - 2 : text.length;
    const segment = text.slice(header.headerEnd, end);
    switch (header.label) {
      case 'tool call ': {
        const open = segment.indexOf('(');
        const closesWithParen = segment.endsWith(')');
        if (open < 0 || !closesWithParen) return { number: header.number, kind: 'tool_call', toolName: segment, bodyStart: end, bodyEnd: end };
        return { number: header.number, kind: 'tool_call', toolName: segment.slice(0, open), bodyStart: header.headerEnd + open + 1, bodyEnd: end - 1 };
      }
      case 'tool result ': {
        const colon = segment.indexOf(': ');
        if (colon < 0) return { number: header.number, kind: 'tool_result', bodyStart: header.headerEnd, bodyEnd: end };
        const name = segment.slice(0, colon);
        return { number: header.number, kind: 'tool_result', ...(name !== '' ? { toolName: name } : {}), bodyStart: header.headerEnd + colon + 2, bodyEnd: end };
      }
      case 'assistant reasoning: ':
        return { number: header.number, kind: 'reasoning', bodyStart: header.headerEnd, bodyEnd: end };
      default:
        return { number: header.number, kind: header.label.slice(0, -2) as RenderedStepKind, bodyStart: header.headerEnd, bodyEnd: end };
    }
  });
}
