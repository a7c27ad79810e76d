/**
 * The default output (`grade`'s results.jsonl, `compare`'s compare.jsonl) never silently
 * replaces the results of another run. Rerunning the same command rewrites it (that is how a
 * run resumes: its verdicts come from the cache), so it is refused only when the file holds a
 * different run: another first record or another judge. `--out` names another file; `--force`
 * replaces it.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { RubricateError } from '../errors.js';
import { safeParseJson } from '../util/json.js';
import { isRecord } from '../util/is-record.js';

/** What identifies a run in its output: the first record's id and the judge (absent for a jury or when unknown). */
export interface RunIdentity {
  firstId?: string;
  judge?: string;
}

function firstLineOf(file: string): string {
  const descriptor = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(1 << 20);
    const read = readSync(descriptor, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, read).toString('utf8').split('\n', 1)[0];
  } finally {
    closeSync(descriptor);
  }
}

/** The run an output file holds, from its first line; undefined when it is not one of our outputs. */
function runIn(file: string): RunIdentity | undefined {
  const parsed = safeParseJson(firstLineOf(file));
  if (!parsed.ok || !isRecord(parsed.value) || typeof parsed.value.id !== 'string') return undefined;
  const judge = isRecord(parsed.value.judge) && typeof parsed.value.judge.id === 'string' ? parsed.value.judge.id : undefined;
  return { firstId: parsed.value.id, judge };
}

const describe = (run: RunIdentity) => [run.firstId !== undefined ? `first record "${run.firstId}"` : undefined, run.judge ? `judge ${run.judge}` : undefined].filter(Boolean).join(', ');

/**
 * Refuses (OUTPUT_CONFLICT, exit 2) to replace the default output when it holds another run.
 * `thisRun` is only computed when the file exists and is not empty.
 */
export async function refuseReplacingAnotherRun(options: { out: string; isDefault: boolean; force?: boolean; flag?: string; thisRun: () => Promise<RunIdentity> }): Promise<void> {
  if (!options.isDefault || options.force || !existsSync(options.out) || firstLineOf(options.out).trim() === '') return;
  const held = runIn(options.out);
  const next = await options.thisRun();
  const differs =
    !held ||
    (held.firstId !== undefined && next.firstId !== undefined && held.firstId !== next.firstId) ||
    (held.judge !== undefined && next.judge !== undefined && held.judge !== next.judge);
  if (!differs) return;
  const holds = held ? `the output of another run (${describe(held)}; this run: ${describe(next)})` : 'something that is not the output of a run';
  throw new RubricateError(
    'OUTPUT_CONFLICT',
    `the default --out holds ${holds}: give this run its own --out FILE, or --force to replace it (the same command run again is never refused: it resumes)`,
    { file: options.out, field: options.flag ?? 'out' },
  );
}

/** The id of a stream's first record (an item, a pair or an invalid record), reading no further. */
export async function firstRecordId(records: AsyncIterable<{ kind: string; id?: string; item?: { id: string }; pair?: { id: string } }>): Promise<string | undefined> {
  try {
    for await (const record of records) return record.item?.id ?? record.pair?.id ?? record.id;
  } catch {
    // The run itself reports an input it cannot read.
  }
  return undefined;
}
