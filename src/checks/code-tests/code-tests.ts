/**
 * `code-tests`: the response's Python code run against the criterion's tests in the sandbox
 * (`sandbox.ts`). The code is the last closed fenced block labelled `python`, `py` or `python3`;
 * failing that, the last closed fenced block with no label. A response with no such block fails (nothing ran).
 * The criterion is met when every test passed; the count is kept in the verdict (`tests`). A
 * timeout or the output bound is the code's failure, recorded as the reason; a sandbox that could
 * not run is an error (SANDBOX_UNAVAILABLE), never a failure.
 */
import { z } from 'zod';
import type { CheckDefinition, CheckOutcome } from '../types.js';
import { runPythonTests, type SandboxRun } from './sandbox.js';

const codeTestsParameters = z
  .object({
    language: z.literal('python'),
    tests: z.string().min(1).max(1_000_000),
    timeout_ms: z.number().int().min(100).max(120_000).default(10_000),
    memory_mb: z.number().int().min(64).max(8192).default(512),
    max_output_bytes: z.number().int().min(1024).max(16 * 1024 * 1024).default(65_536),
    max_processes: z.number().int().min(1).max(512).default(16),
  })
  .strict();

type CodeTestsParameters = z.infer<typeof codeTestsParameters>;

const openingFence = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)/;

/** The closed fenced blocks of a text with their labels, in one pass over its lines (linear in its length). */
function fencedBlocks(text: string): Array<{ label: string; body: string }> {
  const blocks: Array<{ label: string; body: string }> = [];
  let open: { fence: string; label: string; lines: string[] } | undefined;
  for (const line of text.split('\n')) {
    if (open) {
      const closing = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (closing && closing[1][0] === open.fence[0] && closing[1].length >= open.fence.length) {
        blocks.push({ label: open.label, body: open.lines.join('\n') });
        open = undefined;
      } else {
        open.lines.push(line);
      }
      continue;
    }
    const opening = openingFence.exec(line);
    if (opening && !(opening[1][0] === '`' && line.slice(opening[0].length).includes('`'))) open = { fence: opening[1], label: opening[2].toLowerCase(), lines: [] };
  }
  return blocks;
}

/** The code a response offers: the last `python` block, else the last unlabelled block (null: none; an unclosed block is none). */
export function extractPythonCode(response: string): string | null {
  let labelled: string | null = null;
  let unlabelled: string | null = null;
  for (const { label, body } of fencedBlocks(response)) {
    if (label === 'python' || label === 'py' || label === 'python3') labelled = body;
    else if (label === '') unlabelled = body;
  }
  return labelled ?? unlabelled;
}

function describeRun(run: SandboxRun): CheckOutcome {
  const passed = run.tests.filter((test) => test.passed).length;
  const tests = { passed, total: run.total, ending: run.ending };
  const firstFailure = run.tests.find((test) => !test.passed);
  let detail = `${passed}/${run.total} tests passed`;
  if (run.ending === 'time_limit') detail += `; stopped at the time limit after ${run.tests.length} of ${run.total}`;
  if (run.ending === 'output_limit') detail += `; stopped at the output limit after ${run.tests.length} of ${run.total}`;
  if (firstFailure) detail += `; ${firstFailure.name}: ${firstFailure.reason ?? 'failed'}`;
  return { passed: run.ending === 'finished' && passed === run.total, detail, tests };
}

export const codeTestsCheck: CheckDefinition<CodeTestsParameters> = {
  type: 'code-tests',
  description: "The response's Python code passes the given tests (run in a sandbox)",
  family: 'general',
  outOfProcess: true,
  parameters: codeTestsParameters,
  describe: () => "The response's Python code passes the given tests",
  async evaluate(response, parameters) {
    const code = extractPythonCode(response);
    if (code === null) return { passed: false, detail: 'no Python code block in the response', tests: { passed: 0, total: 0, ending: 'finished' } };
    const run = await runPythonTests(code, parameters.tests, {
      timeoutMs: parameters.timeout_ms,
      memoryMb: parameters.memory_mb,
      maxOutputBytes: parameters.max_output_bytes,
      maxProcesses: parameters.max_processes,
    });
    return describeRun(run);
  },
};
