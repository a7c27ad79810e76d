/**
 * How `grade` and `compare` report bad input records. Each goes to stderr as it is read, except
 * while no record of the input has been good yet: then only the first few are shown, and a file
 * whose records all fail gets one diagnosis at the end (how many, the message they share)
 * instead of a line each. A file that looks like another format stops at its first bad record
 * with INPUT_WRONG_TYPE naming the `--format` that fits (`formats/detect.ts`).
 */
import { RubricateError } from '../errors.js';
import { otherFormatHint, type FormatKind } from '../formats/detect.js';
import { reportInputError, type CommandContext } from './context.js';

/** Bad records shown before the first good one; the rest wait for the end-of-run diagnosis. */
const shownBeforeFirstGood = 3;

/** A message with its quoted parts (ids, keys) blanked, so records failing alike group together. */
function shapeOf(error: RubricateError): string {
  return `${error.code}: ${error.message.replace(/"[^"]*"/g, '"…"')}`;
}

export class InputReport {
  private good = 0;
  private bad = 0;
  private held = 0;
  private formatChecked = false;
  private readonly shapes = new Map<string, { count: number; example: RubricateError }>();
  /** Bad lines of a side file (`--responses`) by file: each is a results line, but not an item of the input. */
  private readonly sideLines = new Map<string, number>();
  /** Whether every bad record of the input lacked its response (with `--responses`: the file matched it not). */
  private allLackResponse = true;

  constructor(
    private readonly context: CommandContext,
    private readonly input: { file: string; format: string; kind: FormatKind; responses?: string },
  ) {}

  /**
   * The records as they come, counted. The first bad one, while none was good, stops the run
   * when the file looks like another format (nothing has been graded yet).
   */
  async *watch<Record extends { kind: string }>(records: AsyncIterable<Record>): AsyncGenerator<Record> {
    try {
      for await (const record of records) {
        if (record.kind !== 'invalid') this.good += 1;
        else if (this.good === 0 && !this.formatChecked) {
          this.formatChecked = true;
          const hint = await this.otherFormat();
          if (hint) throw new RubricateError('INPUT_WRONG_TYPE', `read as --format ${this.input.format}, but ${hint}`, { file: this.input.file, field: 'format' });
        }
        yield record;
      }
    } catch (error) {
      // A file of the wrong type (a JSON list read as JSONL) whose records are of a known format: name the format.
      if (RubricateError.isInstance(error) && error.code === 'INPUT_WRONG_TYPE' && error.details.field !== 'format' && error.details.file === this.input.file) {
        const hint = await this.otherFormat();
        if (hint) throw new RubricateError('INPUT_WRONG_TYPE', `${error.message}; ${hint}`, error.details, { cause: error });
      }
      throw error;
    }
  }

  /** One bad record (every command's `onInvalid`). */
  invalid(error: RubricateError): void {
    this.bad += 1;
    const file = error.details.file;
    if (typeof file === 'string' && file !== this.input.file) this.sideLines.set(file, (this.sideLines.get(file) ?? 0) + 1);
    else if (error.details.field !== 'response') this.allLackResponse = false;
    const shape = shapeOf(error);
    const entry = this.shapes.get(shape);
    if (entry) entry.count += 1;
    else this.shapes.set(shape, { count: 1, example: error });
    if (this.good === 0 && this.bad > shownBeforeFirstGood) {
      this.held += 1;
      return;
    }
    this.releaseHeld();
    reportInputError(this.context, error);
  }

  /** After the run: the diagnosis when no record was good, else a note of the bad records not shown. */
  finish(): void {
    if (this.bad === 0) return;
    if (this.good > 0) return this.releaseHeld();
    const [common] = [...this.shapes.values()].sort((first, second) => second.count - first.count);
    const share = common.count === this.bad ? 'all the same way' : `${common.count} of them this way`;
    const side = [...this.sideLines].map(([file, count]) => `${count} invalid line${count === 1 ? '' : 's'} in ${file}`);
    const own = this.bad - [...this.sideLines.values()].reduce((total, count) => total + count, 0);
    const lines = [`no record of ${this.input.file} could be read as --format ${this.input.format}: ${own} invalid${side.length > 0 ? ` (and ${side.join(', ')})` : ''}, ${share}:`];
    lines.push(`  ${common.example.message} [${common.example.code}]`);
    if (this.held > 0) lines.push(`  (${this.held} not shown above; each is a line of the output with status "invalid")`);
    if (this.responsesMatchedNothing) lines.push(`nothing was graded: ${this.input.responses} gave no example a response (check that its lines carry the examples' key field), then rerun`);
    this.context.stderr(lines.join('\n'));
  }

  /**
   * `--responses` matched no record of the input: a usage error, as a wrong `--format` is
   * (exit 2, nothing was graded), not bad records among good ones (exit 3).
   */
  get responsesMatchedNothing(): boolean {
    return this.input.responses !== undefined && this.good === 0 && this.bad > 0 && this.allLackResponse;
  }

  /** The invalid lines of side files (`--responses`), by file: counted apart from the input's items. */
  get sideFileLines(): ReadonlyMap<string, number> {
    return this.sideLines;
  }

  private otherFormat(): Promise<string | undefined> {
    return otherFormatHint(this.input.file, this.input.format, this.input.kind);
  }

  private releaseHeld(): void {
    if (this.held === 0) return;
    this.context.stderr(`… and ${this.held} more invalid record(s) before the first good one (each is a line of the output with status "invalid")`);
    this.held = 0;
  }
}
