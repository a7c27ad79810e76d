/**
 * The agentic judge from a run spec's `agentic` group: its settings checked (each one refused by
 * name where nothing would read it), its tools built (the documents read once), and each judge of
 * the run wrapped. A run without `agentic.tools` gets its judges back as they are.
 */
import { RubricateError } from '../../errors.js';
import type { AgenticSettings, AgenticToolName, RunSpec } from '../../spec/run-spec.js';
import type { Judge } from '../types.js';
import { createAgenticJudge } from './agentic-judge.js';
import { checkTool } from './check-tool.js';
import { createFetchTool, defaultFetchMaxBytes, defaultFetchTimeoutMs, parseAllowEntry } from './fetch-tool.js';
import { createSearchTool, loadDocuments } from './search-tool.js';
import { stepsTool } from './steps-tool.js';
import type { AgenticTool } from './tool.js';

export const defaultMaxToolCalls = 4;

/** Each setting, its flag and the tool that reads it (undefined: every agentic judge reads it). */
const settingReaders: Array<{ key: keyof AgenticSettings; flag: string; tool?: AgenticToolName }> = [
  { key: 'maxToolCalls', flag: '--judge-tool-budget' },
  { key: 'fetchAllow', flag: '--fetch-allow', tool: 'fetch' },
  { key: 'fetchMaxBytes', flag: '--fetch-max-bytes', tool: 'fetch' },
  { key: 'fetchTimeoutMs', flag: '--fetch-timeout', tool: 'fetch' },
  { key: 'documents', flag: '--documents', tool: 'search' },
];

function refused(message: string, field: string): RubricateError {
  return new RubricateError('CONFIG_INVALID', message, { field: field.replace(/^--/, '') });
}

/**
 * Refuses, by flag, a setting nothing reads (a tool setting without its tool, any of them without
 * `--judge-tools`), a tool without what it needs, and runs whose prompts could show the reference.
 */
export function checkAgenticSettings(spec: Pick<RunSpec, 'agentic' | 'plan'>, run: { batch?: boolean } = {}): void {
  const { agentic } = spec;
  const tools = agentic.tools ?? [];
  for (const { key, flag, tool } of settingReaders) {
    if (agentic[key] === undefined) continue;
    if (tools.length === 0) throw refused(`${flag} is read only by the agentic judge: give --judge-tools, or leave it out`, flag);
    if (tool && !tools.includes(tool)) throw refused(`${flag} is read only by the ${tool} tool, which --judge-tools does not offer: add ${tool} or leave it out`, flag);
  }
  if (tools.length === 0) return;
  if (tools.includes('fetch') && !agentic.fetchAllow) throw refused('the fetch tool needs the hosts it may read: --fetch-allow HOST (repeat for more)', '--fetch-allow');
  const badHost = agentic.fetchAllow?.find((entry) => parseAllowEntry(entry) === undefined);
  if (badHost !== undefined) throw refused(`--fetch-allow "${badHost}" is not a host: example.org, *.example.org, 127.0.0.1:8080 or [::1]:8080`, '--fetch-allow');
  if (tools.includes('search') && !agentic.documents) throw refused('the search tool needs the documents it searches: --documents FOLDER or FILE.jsonl', '--documents');
  // A protocol's or a custom template's prompt places the reference where it cannot be cut out.
  if (spec.plan.protocol !== undefined && spec.plan.protocol !== 'native') throw refused(`--judge-tools works with rubricate's own prompts, not --judge-protocol ${spec.plan.protocol} (its prompt would show the reference)`, '--judge-protocol');
  if (spec.plan.template !== undefined) throw refused('--judge-tools works with rubricate\'s own prompts, not --judge-template (a custom prompt may show the reference)', '--judge-template');
  if (run.batch) throw refused('--judge-tools needs each tool turn answered before the next: it cannot go through --batch', '--batch');
}

/** The tools a spec offers, built (the documents read and indexed), and what identifies them. */
async function buildTools(agentic: AgenticSettings): Promise<{ tools: AgenticTool[]; identity: Record<string, unknown> }> {
  const tools: AgenticTool[] = [];
  const identity: Record<string, unknown> = { tools: agentic.tools, maxToolCalls: agentic.maxToolCalls ?? defaultMaxToolCalls };
  for (const name of agentic.tools ?? []) {
    if (name === 'fetch') {
      const settings = { allow: agentic.fetchAllow ?? [], timeoutMs: agentic.fetchTimeoutMs ?? defaultFetchTimeoutMs };
      tools.push(createFetchTool(settings));
      Object.assign(identity, { fetchAllow: settings.allow, fetchMaxBytes: agentic.fetchMaxBytes ?? defaultFetchMaxBytes });
    } else if (name === 'search') {
      const index = await loadDocuments(agentic.documents!);
      tools.push(createSearchTool(index));
      Object.assign(identity, { documents: { count: index.documents.length, sha256: index.sha256 } });
    } else tools.push(name === 'check' ? checkTool : stepsTool);
  }
  return { tools, identity };
}

/**
 * The run's judges, each wrapped as an agentic judge when the spec offers tools (checked first).
 *
 * @example
 * ```ts
 * const judges = await withAgenticTools([judge], parseRunSpec({ agentic: { tools: ['search'], documents: 'sources.jsonl' } }));
 * ```
 */
export async function withAgenticTools(judges: Judge[], spec: Pick<RunSpec, 'agentic' | 'plan'>, run: { batch?: boolean } = {}): Promise<Judge[]> {
  checkAgenticSettings(spec, run);
  if (!spec.agentic.tools) return judges;
  if (judges.length === 0) throw refused('--judge-tools needs a judge to call them: --judge none calls no tools', '--judge-tools');
  const { tools, identity } = await buildTools(spec.agentic);
  const options = { tools, identity, maxToolCalls: spec.agentic.maxToolCalls ?? defaultMaxToolCalls, fetchMaxBytes: spec.agentic.fetchMaxBytes ?? defaultFetchMaxBytes };
  return judges.map((judge) => createAgenticJudge(judge, options));
}
