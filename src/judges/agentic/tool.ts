/**
 * The contract of an agentic judge's tools, and the helpers they share: reading the arguments a
 * model wrote (each refused by name when it is not what the tool reads) and bounding what a
 * tool hands back. A tool that cannot do what was asked throws a RubricateError
 * (`JUDGE_TOOL_FAILED`, `JUDGE_TOOL_REFUSED` or `JUDGE_TOOL_BUDGET`): never a result the judge
 * could turn into a verdict.
 */
import { RubricateError } from '../../errors.js';
import type { AgenticToolName } from '../../spec/run-spec.js';
import type { PromptMaterial } from './material.js';

/** What one verdict's tool calls share: the prompt's material and the budgets left. */
export interface ToolContext {
  material: PromptMaterial;
  signal: AbortSignal;
  /** Bytes the verdict's fetches may still read. */
  fetchBytesLeft: number;
}

export interface ToolOutput {
  /** What the judge reads. */
  text: string;
  /** One line for the results (`200 text/html, 5120 bytes`). */
  summary: string;
  /** Bytes of source read (a fetch's body); default the text's length. */
  bytes?: number;
}

export interface AgenticTool {
  name: AgenticToolName;
  /** What the judge is told: what it does and its arguments. */
  description: string;
  /** The argument names it reads; any other is refused. */
  arguments: readonly string[];
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutput>;
}

/** Characters of one tool result the judge reads; longer ones are cut, and say so. */
export const maxToolResultCharacters = 16_000;

export function toolFailed(tool: string, message: string): RubricateError {
  return new RubricateError('JUDGE_TOOL_FAILED', `tool ${tool}: ${message}`, { tool });
}

export function toolRefused(tool: string, message: string): RubricateError {
  return new RubricateError('JUDGE_TOOL_REFUSED', `tool ${tool}: ${message}`, { tool });
}

/** Refuses arguments the tool does not read, by name. */
export function checkArgumentNames(tool: AgenticTool, args: Record<string, unknown>): void {
  const unknown = Object.keys(args).find((name) => !tool.arguments.includes(name));
  if (unknown !== undefined) throw toolFailed(tool.name, `"${unknown}" is not one of its arguments (${tool.arguments.join(', ')})`);
}

export function stringArgument(tool: string, args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value.trim() === '') throw toolFailed(tool, `argument "${name}" must be a non-empty string`);
  return value;
}

export function optionalInteger(tool: string, args: Record<string, unknown>, name: string, minimum: number, maximum: number): number | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) throw toolFailed(tool, `argument "${name}" must be an integer from ${minimum} to ${maximum}`);
  return value;
}

/** The response a tool works on: the one labelled `response` (pairwise and listwise prompts label theirs), or the only one. */
export function responseOf(tool: string, args: Record<string, unknown>, material: PromptMaterial): string {
  const label = args.response;
  if (label !== undefined && label !== null && typeof label !== 'string') throw toolFailed(tool, 'argument "response" must be a response label');
  if (material.responses.size === 0) throw toolFailed(tool, 'the prompt shows no response to work on');
  if (label === undefined || label === null || label === '') {
    if (material.responses.size === 1) return [...material.responses.values()][0];
    throw toolFailed(tool, `the prompt shows several responses: name one with "response" (${[...material.responses.keys()].join(', ')})`);
  }
  const text = material.responses.get(label);
  if (text === undefined) throw toolFailed(tool, `no response labelled "${label}" (${[...material.responses.keys()].join(', ')})`);
  return text;
}

/** A tool result cut to `maxToolResultCharacters`, saying where and how much was left out. */
export function bounded(text: string): string {
  if (text.length <= maxToolResultCharacters) return text;
  return `${text.slice(0, maxToolResultCharacters)}\n[cut: ${text.length - maxToolResultCharacters} more characters not shown]`;
}
