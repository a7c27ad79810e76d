/**
 * The parts of Chart.js the report uses. Chart.js is inlined as its UMD build and read from
 * the page global `Chart` (absent in pages written without charts); these types describe
 * the configs the views pass, including our own dataset fields (intervals, samples, counts).
 */
export type Interval = readonly [number, number] | [number, number] | null;

export interface ReportDataset {
  label: string;
  data: Array<number | null>;
  /** 95% intervals drawn as whiskers by the rubricateIntervals plugin. */
  intervals?: Interval[];
  intervalColor?: string;
  samples?: number[];
  counts?: number[];
  [option: string]: unknown;
}

export interface TooltipItem {
  dataIndex: number;
  raw: number;
  dataset: ReportDataset;
}

interface ChartElement {
  index: number;
}

interface ScaleOptions {
  ticks?: { callback?: (value: number) => string; [option: string]: unknown };
  [option: string]: unknown;
}

export interface ChartConfig {
  type: string;
  data: { labels: Array<string | string[]>; datasets: ReportDataset[] };
  options?: {
    indexAxis?: 'x' | 'y';
    onClick?: (event: unknown, elements: ChartElement[]) => void;
    onHover?: (event: { native: { target: HTMLElement } | null }, elements: ChartElement[]) => void;
    scales?: Record<string, ScaleOptions>;
    plugins?: {
      legend?: Record<string, unknown>;
      tooltip?: { callbacks?: { title?: (items: TooltipItem[]) => string | string[]; label?: (item: TooltipItem) => string | string[] } };
      [plugin: string]: unknown;
    };
    [option: string]: unknown;
  };
}

export interface ChartInstance {
  destroy(): void;
}

/** What the whisker plugin reads from a drawn chart. */
export interface DrawnChart {
  ctx: CanvasRenderingContext2D;
  options: { indexAxis?: string };
  data: { datasets: ReportDataset[] };
  scales: Record<string, { getPixelForValue(value: number): number }>;
  getDatasetMeta(index: number): { hidden: boolean; data: Array<{ x: number; y: number }> };
}

interface ChartDefaults {
  font: { family: string; size: number };
  color: string;
  borderColor: string;
  animation: boolean;
  maintainAspectRatio: boolean;
  plugins: {
    legend: { labels: { boxWidth: number; boxHeight: number } };
    tooltip: { backgroundColor: string; padding: number; cornerRadius: number; titleFont: { weight: string } };
  };
}

export interface ChartConstructor {
  new (canvas: HTMLCanvasElement, config: ChartConfig): ChartInstance;
  defaults: ChartDefaults;
  register(plugin: { id: string; afterDatasetsDraw(chart: DrawnChart): void }): void;
}

/** Chart.js's global, when the page includes it. */
export function chartLibrary(): ChartConstructor | undefined {
  return (globalThis as { Chart?: ChartConstructor }).Chart;
}
