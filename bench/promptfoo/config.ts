/**
 * The promptfoo side of the benchmark as data: the eval config we hand promptfoo, and the
 * reading of its JSON output back into per-criterion verdicts.
 *
 * Config: the `echo` provider with the prompt `{{response}}` returns each item's response
 * unchanged, so promptfoo's only model calls are its llm-rubric grader calls, one per
 * criterion, which go to the judge simulator.
 */
import { stringify } from 'yaml';
import { safeParseJson } from '../../src/util/json.js';
import { simulatedVerdict } from '../simulator/verdict.js';

export interface PromptfooItem {
  id: string;
  response: string;
  criteria: string[];
}

/**
 * promptfoo renders every test var and assertion value as a Nunjucks template before use, so a
 * response containing `{{ … }}`, `{% … %}` or `{# … #}` would be altered or fail to render.
 * Such texts are wrapped in `{% raw %}…{% endraw %}`, which renders back to the text itself;
 * other texts are passed untouched.
 */
export function protectFromNunjucks(text: string): string {
  return /\{[{%#]/.test(text) ? `{% raw %}${text}{% endraw %}` : text;
}

export function buildPromptfooConfig(items: readonly PromptfooItem[], description = 'rubricate side-by-side benchmark'): Record<string, unknown> {
  return {
    description,
    prompts: ['{{response}}'],
    providers: ['echo'],
    tests: items.map((item) => ({
      description: item.id,
      vars: { response: protectFromNunjucks(item.response) },
      assert: item.criteria.map((criterion) => ({ type: 'llm-rubric', value: protectFromNunjucks(criterion) })),
    })),
  };
}

/** The config as YAML text (promptfoo's native config format). */
export function promptfooConfigYaml(items: readonly PromptfooItem[]): string {
  // No line folding and no aliases, so texts reach promptfoo exactly as given.
  return stringify(buildPromptfooConfig(items), { lineWidth: 0, aliasDuplicateObjects: false });
}

export interface PromptfooMismatch {
  itemId: string;
  criterionIndex: number;
  expected: boolean;
  /** null when promptfoo has no grading result for this criterion. */
  actual: boolean | null;
  reason?: string;
}

export interface PromptfooVerdicts {
  verdicts: Map<string, Array<boolean | null>>;
  mismatches: PromptfooMismatch[];
  /** Grader calls promptfoo itself reports (sum of numRequests over llm-rubric results). */
  reportedRequests: number;
  /** Tests whose row carries an error (provider or grader failure). */
  errors: number;
}

interface ComponentResult {
  pass?: unknown;
  reason?: unknown;
  assertion?: { type?: unknown } | null;
  tokensUsed?: { numRequests?: unknown } | null;
}

interface ResultRow {
  testIdx?: unknown;
  error?: unknown;
  success?: unknown;
  gradingResult?: { componentResults?: ComponentResult[] } | null;
}

/**
 * Reads promptfoo's `-o out.json` (`results.results[]`, one row per test, llm-rubric outcomes
 * in `gradingResult.componentResults` in assertion order) into verdicts, and checks each
 * against `simulatedVerdict(criterion, response)`.
 */
export function readPromptfooOutput(outputText: string, items: readonly PromptfooItem[]): PromptfooVerdicts | { error: string } {
  const parsed = safeParseJson(outputText);
  if (!parsed.ok) return { error: `promptfoo output is not JSON: ${parsed.error}` };
  const rows = (parsed.value as { results?: { results?: unknown } } | null)?.results?.results;
  if (!Array.isArray(rows)) return { error: 'promptfoo output has no results.results array' };
  const verdicts = new Map<string, Array<boolean | null>>();
  for (const item of items) verdicts.set(item.id, new Array<boolean | null>(item.criteria.length).fill(null));
  const reasons = new Map<string, string>();
  let reportedRequests = 0;
  let errors = 0;
  for (const row of rows as ResultRow[]) {
    const testIndex = typeof row.testIdx === 'number' ? row.testIdx : -1;
    const item = items[testIndex];
    if (!item) continue;
    // A failed test carries the failing reason in `error`; only non-grading failures count as errors.
    if (typeof row.error === 'string' && row.error !== '' && !row.gradingResult) errors += 1;
    const components = (row.gradingResult?.componentResults ?? []).filter((component) => component?.assertion?.type === 'llm-rubric');
    const itemVerdicts = verdicts.get(item.id) as Array<boolean | null>;
    components.forEach((component, criterionIndex) => {
      if (criterionIndex >= itemVerdicts.length) return;
      itemVerdicts[criterionIndex] = component.pass === true;
      if (typeof component.reason === 'string') reasons.set(`${item.id}\u0000${criterionIndex}`, component.reason);
      const requests = component.tokensUsed?.numRequests;
      if (typeof requests === 'number') reportedRequests += requests;
    });
  }
  const mismatches: PromptfooMismatch[] = [];
  for (const item of items) {
    const itemVerdicts = verdicts.get(item.id) as Array<boolean | null>;
    item.criteria.forEach((criterion, criterionIndex) => {
      const expected = simulatedVerdict(criterion, item.response);
      if (itemVerdicts[criterionIndex] !== expected) {
        mismatches.push({ itemId: item.id, criterionIndex, expected, actual: itemVerdicts[criterionIndex], reason: reasons.get(`${item.id}\u0000${criterionIndex}`) });
      }
    });
  }
  return { verdicts, mismatches, reportedRequests, errors };
}
