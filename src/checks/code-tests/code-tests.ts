/**
 * `code-tests`: the response's Python code run against the criterion's tests in the sandbox
 * (`sandbox.ts`). The code is the last fenced block labelled `python`, `py` or `python3`; failing
 * that, the last fenced block with no label. A response with no such block fails (nothing ran).
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

const fence = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*\n([\s\S]*?)\n {0,3}\1[`~]*[ \t]*$/gm;

/** The code a response offers: the last `python` block, else the last unlabelled block (null: none). */
export function extractPythonCode(response: string): string | null {
  let labelled: string | null = null;
  let unlabelled: string | null = null;
  for (const match of response.matchAll(fence)) {
    const label = match[2].toLowerCase();
    if (label === 'python' || label === 'py' || label === 'python3') labelled = match[3];
    else if (label === '') unlabelled = match[3];
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
