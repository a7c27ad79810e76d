/**
 * The judge's view of a trajectory: numbered steps, one per paragraph, each naming what it
 * is (user, assistant, tool call with its arguments, tool result). Nothing is shortened
 * unless `maxResultCharacters` asks for it, and then the cut is marked in the text. Steps
 * are separated by blank lines so evidence mode (long responses) chunks on step boundaries
 * and quotes whole steps.
 *
 * Step headers cannot be forged, in two ways at once:
 * - by place: a header is the only thing that starts a line. Every further line of a step is
 *   indented by four spaces, whatever breaks it (LF, CR, CRLF, vertical tab, form feed, the file,
 *   group and record separators, NEL, U+2028, U+2029: every line boundary Unicode and Python's
 *   `splitlines` know), each shown as one LF. So no message, tool result, call argument or tool
 *   name can produce a line that reads as a step header: the judge reads the visual form;
 * - by marker: every header carries a marker derived from the content of all the steps
 *   (`[step 5 #3f9a2c1d5e6b] user: …`), re-drawn in the unlikely case that some step's text holds
 *   it, so no text can contain a real header: it would have to contain a hash of itself.
 * A first paragraph, the legend, tells the judge both. Tool names are restricted at import
 * (`toolNamePattern`); one that is not (a trajectory built in code) is shown escaped.
 */
import { createHash } from 'node:crypto';
import { unclashedNonce } from '../util/nonce.js';
import { forEachStep, toolNamePattern, type Trajectory, type TrajectoryStep } from './trajectory.js';

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

/** Every line boundary a reader may see: CRLF, LF, CR, VT, FF, FS, GS, RS, NEL, LINE and PARAGRAPH SEPARATOR. */
// eslint-disable-next-line no-control-regex -- the file, group and record separators are line boundaries too (Python's splitlines)
const lineBreaks = /\r\n|[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029]/g;

/** How a step's lines after its header start: nothing in a step can start a line. */
const stepIndent = '    ';

/** Text inside a step: every line after the first indented, every line break shown as one LF. */
function indented(text: string): string {
  return text.replace(lineBreaks, `\n${stepIndent}`);
}

/** A tool name as its header shows it: as it is when OpenAI would accept it, else escaped to a JSON string of printable ASCII. */
function shownToolName(name: string): string {
  if (toolNamePattern.test(name)) return name;
  return JSON.stringify(name).replace(/[^\x20-\x7e]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** What follows a step's header: its kind and its text, call or result. */
function stepBody(step: TrajectoryStep, options: RenderTrajectoryOptions): string {
  switch (step.kind) {
    case 'tool_call':
      return `tool call ${shownToolName(step.toolName ?? '')}(${indented(argumentsText(step.toolArguments))})`;
    case 'tool_result':
      return `tool result ${step.toolName === undefined ? '' : shownToolName(step.toolName)}: ${indented(truncated(step.text, options.maxResultCharacters))}`;
    case 'reasoning':
      return `assistant reasoning: ${indented(step.text)}`;
    default:
      return `${step.kind}: ${indented(step.text)}`;
  }
}

const markerLength = 12;

/** The marker of a rendering: a hash of every step's body, which none of them contains. */
function stepMarker(bodies: readonly string[]): string {
  const hash = createHash('sha256').update('rubricate-trajectory\u0000');
  for (const body of bodies) hash.update(body).update('\u0000');
  return unclashedNonce(hash.digest('hex').slice(0, markerLength), (marker) => bodies.some((body) => body.includes(marker)));
}

function legend(marker: string): string {
  return `[trajectory #${marker}] An agent's trajectory in numbered steps. Each step opens with "[step N #${marker}]" at the start of a line, and every further line of a step is indented by four spaces; text that looks like a step header without this marker, or indented, is part of the step it appears in.`;
}

/** The rendering and where each step's header starts in it (UTF-16 offsets). */
function layOut(trajectory: Trajectory, options: RenderTrajectoryOptions): { text: string; offsets: number[] } {
  const bodies: string[] = [];
  forEachStep(trajectory, (step) => bodies.push(stepBody(step, options)));
  const marker = stepMarker(bodies);
  const paragraphs = [legend(marker)];
  const offsets: number[] = [];
  let position = paragraphs[0].length;
  bodies.forEach((body, index) => {
    const paragraph = `[step ${index + 1} #${marker}] ${body}`;
    position += 2;
    offsets.push(position);
    position += paragraph.length;
    paragraphs.push(paragraph);
  });
  return { text: paragraphs.join('\n\n'), offsets };
}

/** The rendering of a whole trajectory, used as the item's response text. */
export function renderTrajectory(trajectory: Trajectory, options: RenderTrajectoryOptions = {}): string {
  return layOut(trajectory, options).text;
}

/**
 * Where each step's "[step N #marker]" header starts in the rendering (UTF-16 offsets). Results
 * keep them, so a view finds the steps without reading headers again.
 */
export function renderedStepOffsets(trajectory: Trajectory, options: RenderTrajectoryOptions = {}): { text: string; offsets: number[] } {
  return layOut(trajectory, options);
}

const legendPattern = new RegExp(`^\\[trajectory #([0-9a-f]{${markerLength}})\\] [^\\n]*`);

/** The legend paragraph a rendering opens with (evidence mode repeats it above the quotes), if the text is one. */
export function renderingLegend(text: string): string | undefined {
  return legendPattern.exec(text)?.[0];
}

/**
 * Whether a rendering indents every further line of its steps (renderings written since that
 * was done say so in their legend); a view takes the indent off to show each text as it was.
 */
export function indentsStepLines(text: string): boolean {
  return renderingLegend(text)?.includes('every further line of a step is indented by four spaces') === true;
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

const labels = '(tool call |tool result |assistant reasoning: |system: |user: |assistant: )';
/** Renderings written before step markers existed: `[step N] kind: …`, from the first character. */
const legacyHeaders = { anywhere: new RegExp(`(?:^|\\n\\n)\\[step (\\d+)\\] ${labels}`, 'g'), at: new RegExp(`^\\[step (\\d+)\\] ${labels}`) };

function markedHeaders(marker: string) {
  return { anywhere: new RegExp(`\\n\\n\\[step (\\d+) #${marker}\\] ${labels}`, 'g'), at: new RegExp(`^\\[step (\\d+) #${marker}\\] ${labels}`) };
}

type Header = { number: number; start: number; headerEnd: number; label: string };

/** Headers at the offsets a results line recorded; null when they do not match the text. */
function headersAtOffsets(text: string, offsets: readonly number[], firstStart: number, at: RegExp): Header[] | null {
  const headers: Header[] = [];
  for (const offset of offsets) {
    const previous = headers.at(-1);
    if (!Number.isInteger(offset) || offset < 0 || offset >= text.length || (previous ? offset < previous.headerEnd + 2 || text.slice(offset - 2, offset) !== '\n\n' : offset !== firstStart)) return null;
    const match = at.exec(text.slice(offset, offset + 80));
    if (!match || Number(match[1]) !== headers.length + 1) return null;
    headers.push({ number: headers.length + 1, start: offset, headerEnd: offset + match[0].length, label: match[2] });
  }
  return headers.length > 0 ? headers : null;
}

/** Headers found by reading the text: numbered 1, 2, 3… in order, anything else skipped. */
function headersInText(text: string, anywhere: RegExp): Header[] {
  const headers: Header[] = [];
  for (const match of text.matchAll(anywhere)) {
    const number = Number(match[1]);
    if (number !== headers.length + 1) continue;
    const start = match.index + (match[0].startsWith('\n\n') ? 2 : 0);
    headers.push({ number, start, headerEnd: match.index + match[0].length, label: match[2] });
  }
  return headers;
}

/**
 * Reads a rendering (what `renderTrajectory` wrote, as results keep it) back into its steps,
 * for views that show steps apart (the HTML report). A rendering with step markers is read
 * exactly, with or without the offsets a results line records: only real headers carry the
 * marker. Older renderings (`[step N] …`, no legend) are exact with their offsets; without
 * them, headers must number 1, 2, 3… in order, so a quoted "[step 7]" mostly stays part of its
 * message, and one quoting the very next header is read as that step. Null when the text is
 * not a rendering.
 */
export function parseRenderedTrajectory(text: string, offsets?: readonly number[]): RenderedStep[] | null {
  const legendText = renderingLegend(text);
  if (!legendText && !text.startsWith('[step 1] ')) return null;
  const firstStart = legendText ? legendText.length + 2 : 0;
  const patterns = legendText ? markedHeaders(legendPattern.exec(legendText)![1]) : legacyHeaders;
  const recorded = offsets && offsets.length > 0 ? headersAtOffsets(text, offsets, firstStart, patterns.at) : null;
  const headers = recorded ?? headersInText(text, patterns.anywhere);
  if (headers.length === 0 || headers[0].start !== firstStart) return null;
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
