/**
 * Page helpers shared by every view: element building (data only ever reaches the page as
 * text nodes or attribute values, never as markup), number formatting, cards, chart defaults
 * and the confidence-interval whisker plugin for Chart.js. The item explorer and the drawer
 * are in `explorer.ts` and `drawer.ts`.
 */
import { chartLibrary, type ChartConfig, type ChartInstance, type Interval } from './chart.js';

export const COLORS = {
  accent: '#4f46e5', accentSoft: 'rgba(79, 70, 229, 0.78)', baseline: '#94a3b8', baselineSoft: 'rgba(148, 163, 184, 0.8)',
  good: '#10b981', bad: '#ef4444', warn: '#f59e0b', neutral: '#cbd5e1', text: '#111827', muted: '#566074', grid: '#eef1f6'
};

/** Builds an element. props: className, text, title, attrs, data, style, on. Children: nodes or strings (as text). */
export type Child = Node | string | number | null | undefined | false | Child[];

type Handlers = { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void };

export interface ElementProps {
  className?: string;
  text?: string | number | null;
  title?: string | number | null;
  attrs?: Record<string, string | number | boolean | null | undefined>;
  data?: Record<string, string | number | boolean>;
  style?: Record<string, string>;
  on?: Handlers;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: ElementProps | null, children?: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props) {
    if (props.className) element.className = props.className;
    if (props.text !== undefined && props.text !== null) element.textContent = String(props.text);
    if (props.title) element.title = String(props.title);
    if (props.attrs) for (const name in props.attrs) if (props.attrs[name] !== undefined && props.attrs[name] !== null) element.setAttribute(name, String(props.attrs[name]));
    if (props.data) for (const key in props.data) element.dataset[key] = String(props.data[key]);
    if (props.style) for (const property in props.style) element.style.setProperty(property, props.style[property]);
    if (props.on) for (const event in props.on) element.addEventListener(event, props.on[event as keyof Handlers] as EventListener);
  }
  if (children) appendChildren(element, children);
  return element;
}

export function appendChildren(element: Node, children: Child[]): void {
  for (let index = 0; index < children.length; index += 1) {
    const child = children[index];
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) appendChildren(element, child);
    else element.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : (child as Node));
  }
}

/** Inline SVG icons are fixed markup written here, never data. */
export type IconName = 'search' | 'close' | 'up' | 'down' | 'sort';

export function icon(name: IconName): SVGSVGElement {
  const paths: Record<IconName, string> = {
    search: 'M11 19a8 8 0 1 1 5.3-14A8 8 0 0 1 11 19Zm10 2-4.35-4.35',
    close: 'M6 6l12 12M18 6 6 18',
    up: 'M6 15l6-6 6 6',
    down: 'M6 9l6 6 6-6',
    sort: 'M8 9l4-4 4 4M16 15l-4 4-4-4'
  };
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('width', '16'); svg.setAttribute('height', '16'); svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('fill', 'none'); svg.setAttribute('stroke', 'currentColor'); svg.setAttribute('stroke-width', '2');
  svg.setAttribute('stroke-linecap', 'round'); svg.setAttribute('stroke-linejoin', 'round'); svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', paths[name]);
  svg.appendChild(path);
  return svg;
}

export function isNumber(value: unknown): value is number { return typeof value === 'number' && isFinite(value); }
export function formatScore(value: unknown, digits?: number): string {
  if (!isNumber(value)) return '—';
  const text = value.toFixed(digits === undefined ? 3 : digits);
  return text.charAt(0) === '-' ? (Number(text) === 0 ? text.slice(1) : '−' + text.slice(1)) : text;
}
export function formatSigned(value: unknown, digits?: number): string {
  if (!isNumber(value)) return '—';
  const text = Math.abs(value).toFixed(digits === undefined ? 3 : digits);
  if (Number(text) === 0) return text;
  return (value > 0 ? '+' : '−') + text;
}
export function formatInteger(value: unknown): string { return isNumber(value) ? Math.round(value).toLocaleString('en-US') : '—'; }
export function formatPercent(value: unknown, digits?: number): string { return isNumber(value) ? (value * 100).toFixed(digits === undefined ? 1 : digits) + '%' : '—'; }
export function formatCompact(value: unknown): string {
  if (!isNumber(value)) return '—';
  const absolute = Math.abs(value);
  if (absolute >= 1e9) return (value / 1e9).toFixed(2) + 'B';
  if (absolute >= 1e6) return (value / 1e6).toFixed(2) + 'M';
  if (absolute >= 1e4) return (value / 1e3).toFixed(1) + 'k';
  return formatInteger(value);
}
export function formatInterval(interval: Interval | undefined, digits?: number): string {
  if (!interval || !isNumber(interval[0]) || !isNumber(interval[1])) return '—';
  return formatScore(interval[0], digits) + ' – ' + formatScore(interval[1], digits);
}
export function formatSignedInterval(interval: Interval | undefined, digits?: number): string {
  if (!interval || !isNumber(interval[0]) || !isNumber(interval[1])) return '—';
  return formatSigned(interval[0], digits) + ' … ' + formatSigned(interval[1], digits);
}
export function formatPoints(points: number): string {
  const text = Number.isInteger(points) ? String(Math.abs(points)) : Math.abs(points).toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
  return (points < 0 ? '−' : '+') + text;
}
export function formatCost(value: unknown): string { return isNumber(value) ? '$' + (value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(2) : value.toFixed(4)) : 'unknown'; }
export function truncate(text: string, length: number): string { return text.length > length ? text.slice(0, length - 1) + '…' : text; }
export function wrapLines(text: string, width: number): string[] {
  const words = String(text).split(/\s+/), lines: string[] = [];
  let line = '';
  for (let index = 0; index < words.length; index += 1) {
    if ((line + ' ' + words[index]).trim().length > width && line) { lines.push(line); line = words[index]; }
    else line = (line + ' ' + words[index]).trim();
    if (lines.length >= 6) break;
  }
  if (line && lines.length < 7) lines.push(line);
  return lines;
}
export function tagGroupOf(tag: string): string { const colon = tag.indexOf(':'); return colon > 0 ? tag.slice(0, colon) : 'tags'; }
export function tagNameOf(tag: string): string { const colon = tag.indexOf(':'); return colon > 0 ? tag.slice(colon + 1) : tag; }
export function plural(count: number, word: string, many?: string): string { return formatInteger(count) + ' ' + (count === 1 ? word : many || word + 's'); }

/** [label, value, className, title]; falsy rows are left out. */
export type StatRow = [string, string, string?, string?] | null | undefined | false;

export function statList(rows: StatRow[]): HTMLElement {
  return h('dl', { className: 'stat-list' }, rows.filter((row): row is Exclude<StatRow, null | undefined | false> => Boolean(row)).map(function (row) {
    return h('div', { className: 'stat-row' }, [h('dt', { text: row[0] }), h('dd', { className: row[2] || 'num', text: row[1], title: row[3] || undefined })]);
  }));
}

export function card(title: string | null, children: Child[], className?: string): HTMLElement {
  return h('section', { className: 'card' + (className ? ' ' + className : '') }, [title ? h('h3', { text: title }) : null, ...children]);
}

export function sectionHead(title: string, hint?: string | null, extra?: Node | null): HTMLElement {
  return h('div', { className: 'section-head' }, [h('h2', { text: title }), hint ? h('span', { className: 'hint', text: hint }) : null, extra || null]);
}

/** What a view lists above its sections when its input had problems; null when it had none. */
export function problemsCallout(notes: Node[]): HTMLElement | null {
  if (notes.length === 0) return null;
  return h('div', { className: 'callout error', style: { 'margin-top': '16px' }, data: { testid: 'problems' } }, notes);
}

/** The unreadable lines of an input, folded under one summary line. */
export function invalidLinesNote(summary: string, lines: ReadonlyArray<{ message: string }>): HTMLElement {
  return h('details', null, [h('summary', { text: summary }), h('ul', null, lines.map(function (line) { return h('li', { className: 'mono', text: line.message }); }))]);
}

/** Segmented buttons; calls onSelect(value) and keeps aria-pressed in sync. */
export function tabs<V extends string>(options: Array<{ value: V; label: string }>, selected: V, onSelect: (value: V) => void): HTMLElement {
  const container = h('div', { className: 'tabs', attrs: { role: 'group' } });
  options.forEach(function (option) {
    const button = h('button', { text: option.label, attrs: { type: 'button', 'aria-pressed': option.value === selected ? 'true' : 'false' }, data: { value: option.value } });
    button.addEventListener('click', function () {
      Array.prototype.forEach.call(container.children, function (other) { other.setAttribute('aria-pressed', other === button ? 'true' : 'false'); });
      onSelect(option.value);
    });
    container.appendChild(button);
  });
  return container;
}

/** The 95% interval drawn as a track with the point estimate. */
export function ciTrack(score: number | null | undefined, interval: Interval | undefined, low: number, high: number, baselineScore?: number | null): HTMLElement {
  const span = high - low || 1;
  function position(value: number): number { return Math.max(0, Math.min(100, ((value - low) / span) * 100)); }
  const track = h('div', { className: 'ci-track', attrs: { role: 'img', 'aria-label': '95% confidence interval ' + formatInterval(interval) } });
  if (interval && isNumber(interval[0]) && isNumber(interval[1])) {
    track.appendChild(h('div', { className: 'ci-range', style: { left: position(interval[0]) + '%', width: Math.max(0.6, position(interval[1]) - position(interval[0])) + '%' } }));
  }
  if (isNumber(baselineScore)) track.appendChild(h('div', { className: 'ci-point baseline', title: 'baseline ' + formatScore(baselineScore), style: { left: position(baselineScore) + '%' } }));
  if (isNumber(score)) track.appendChild(h('div', { className: 'ci-point', style: { left: position(score) + '%' } }));
  return h('div', null, [track, h('div', { className: 'ci-scale num' }, [h('span', { text: formatScore(low, 1) }), h('span', { text: formatScore(high, 1) })])]);
}

const chartRegistry: ChartInstance[] = [];
const Chart = chartLibrary();

if (Chart) {
  Chart.defaults.font.family = getComputedStyle(document.documentElement).getPropertyValue('--font') || 'system-ui, sans-serif';
  Chart.defaults.font.size = 12;
  Chart.defaults.color = COLORS.muted;
  Chart.defaults.borderColor = COLORS.grid;
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.plugins.legend.labels.boxWidth = 10;
  Chart.defaults.plugins.legend.labels.boxHeight = 10;
  Chart.defaults.plugins.tooltip.backgroundColor = 'rgba(17, 24, 39, 0.94)';
  Chart.defaults.plugins.tooltip.padding = 10;
  Chart.defaults.plugins.tooltip.cornerRadius = 8;
  Chart.defaults.plugins.tooltip.titleFont = { weight: '600' };
  Chart.register({
    id: 'rubricateIntervals',
    afterDatasetsDraw: function (chart) {
      const context = chart.ctx;
      const horizontal = chart.options.indexAxis === 'y';
      chart.data.datasets.forEach(function (dataset, datasetIndex) {
        const intervals = dataset.intervals;
        if (!intervals) return;
        const meta = chart.getDatasetMeta(datasetIndex);
        if (meta.hidden) return;
        const valueScale = horizontal ? chart.scales.x : chart.scales.y;
        meta.data.forEach(function (element, index) {
          const interval = intervals[index];
          if (!interval || !isNumber(interval[0]) || !isNumber(interval[1])) return;
          const from = valueScale.getPixelForValue(interval[0]);
          const to = valueScale.getPixelForValue(interval[1]);
          const center = horizontal ? element.y : element.x;
          const cap = 3.5;
          context.save();
          context.strokeStyle = dataset.intervalColor || 'rgba(17, 24, 39, 0.7)';
          context.lineWidth = 1.4;
          context.beginPath();
          if (horizontal) {
            context.moveTo(from, center); context.lineTo(to, center);
            context.moveTo(from, center - cap); context.lineTo(from, center + cap);
            context.moveTo(to, center - cap); context.lineTo(to, center + cap);
          } else {
            context.moveTo(center, from); context.lineTo(center, to);
            context.moveTo(center - cap, from); context.lineTo(center + cap, from);
            context.moveTo(center - cap, to); context.lineTo(center + cap, to);
          }
          context.stroke();
          context.restore();
        });
      });
    }
  });
}

/** A chart in a box of the given height; without Chart.js the box says so instead. */
export function chartBox(height: number, config: ChartConfig, label?: string): { element: HTMLElement; chart: ChartInstance | null } {
  const box = h('div', { className: 'chart-box', style: { height: height + 'px' } });
  if (!Chart) {
    box.appendChild(h('div', { className: 'callout info', text: 'Charts are unavailable in this copy of the report.' }));
    return { element: box, chart: null };
  }
  const canvas = h('canvas', { attrs: { role: 'img', 'aria-label': label || 'chart' } });
  box.appendChild(canvas);
  const chart = new Chart(canvas, config);
  chartRegistry.push(chart);
  return { element: box, chart: chart };
}

/** Chart boxes remember their chart so a redraw can destroy it first. */
type ChartHolder = HTMLElement & { __chart?: ChartInstance | null };

export function replaceChart(holder: HTMLElement, height: number, config: ChartConfig, label?: string): ChartInstance | null {
  const previous = (holder.firstChild as ChartHolder | null)?.__chart;
  if (previous) previous.destroy();
  holder.textContent = '';
  const made = chartBox(height, config, label);
  (made.element as ChartHolder).__chart = made.chart;
  holder.appendChild(made.element);
  return made.chart;
}

export function showFatal(root: HTMLElement, error: unknown): void {
  root.textContent = '';
  root.appendChild(h('div', { className: 'fatal' }, [
    h('h2', { text: 'This report could not be displayed' }),
    h('p', { className: 'muted', text: errorMessage(error) })
  ]));
}

/** The message of anything thrown. */
export function errorMessage(error: unknown): string {
  return error instanceof Error && error.message ? error.message : String(error);
}
