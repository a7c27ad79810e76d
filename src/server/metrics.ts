/**
 * Prometheus metrics in the text exposition format (version 0.0.4), without a client
 * library: counters and histograms with labels, and gauges read at scrape time.
 */
import type { EngineEvent } from '../engine/engine.js';

export const prometheusContentType = 'text/plain; version=0.0.4; charset=utf-8';

type Labels = Record<string, string>;

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatLabels(labels: Labels, extra?: [string, string]): string {
  const parts = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabelValue(value)}"`);
  if (extra) parts.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`);
  return parts.length > 0 ? `{${parts.join(',')}}` : '';
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

/** Series keyed by their label values in a fixed label order. */
function seriesKey(labelNames: readonly string[], labels: Labels): string {
  // Built without an array: counters are bumped several times per request.
  let key = '';
  for (let index = 0; index < labelNames.length; index += 1) key += `${index > 0 ? '\u0000' : ''}${labels[labelNames[index]] ?? ''}`;
  return key;
}

interface Metric {
  render(lines: string[]): void;
}

export class Counter implements Metric {
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
  ) {}

  inc(labels: Labels = {}, amount = 1): void {
    const key = seriesKey(this.labelNames, labels);
    const entry = this.series.get(key);
    if (entry) entry.value += amount;
    else this.series.set(key, { labels: pickLabels(this.labelNames, labels), value: amount });
  }

  value(labels: Labels = {}): number {
    return this.series.get(seriesKey(this.labelNames, labels))?.value ?? 0;
  }

  render(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} counter`);
    // A counter without labels is always exported, so dashboards see 0 rather than nothing.
    if (this.series.size === 0 && this.labelNames.length === 0) lines.push(`${this.name} 0`);
    for (const { labels, value } of this.series.values()) lines.push(`${this.name}${formatLabels(labels)} ${formatValue(value)}`);
  }
}

export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    /** Read at scrape time: one value, or one per label set. */
    private readonly read: () => number | Array<{ labels: Labels; value: number }>,
  ) {}

  render(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} gauge`);
    const value = this.read();
    if (typeof value === 'number') lines.push(`${this.name} ${formatValue(value)}`);
    else for (const entry of value) lines.push(`${this.name}${formatLabels(entry.labels)} ${formatValue(entry.value)}`);
  }
}

export class Histogram implements Metric {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
    readonly labelNames: readonly string[] = [],
  ) {}

  observe(labels: Labels, value: number): void {
    const key = seriesKey(this.labelNames, labels);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels: pickLabels(this.labelNames, labels), counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    // Counts are stored per bucket and made cumulative when rendered.
    const index = this.buckets.findIndex((bound) => value <= bound);
    if (index >= 0) entry.counts[index] += 1;
    entry.sum += value;
    entry.count += 1;
  }

  render(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`);
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, index) => {
        cumulative += counts[index];
        lines.push(`${this.name}_bucket${formatLabels(labels, ['le', formatValue(bound)])} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${formatLabels(labels, ['le', '+Inf'])} ${count}`);
      lines.push(`${this.name}_sum${formatLabels(labels)} ${formatValue(sum)}`);
      lines.push(`${this.name}_count${formatLabels(labels)} ${count}`);
    }
  }
}

function pickLabels(names: readonly string[], labels: Labels): Labels {
  const picked: Labels = {};
  for (const name of names) picked[name] = labels[name] ?? '';
  return picked;
}

export class MetricsRegistry {
  private readonly metrics: Metric[] = [];

  register<T extends Metric>(metric: T): T {
    this.metrics.push(metric);
    return metric;
  }

  render(): string {
    const lines: string[] = [];
    for (const metric of this.metrics) metric.render(lines);
    return `${lines.join('\n')}\n`;
  }
}

/** What the reward service reports; the gauges read live state through these callbacks. */
export interface ServerGaugeSources {
  queueDepth(): number;
  queueWaiting(): number;
  queueCapacity(): number;
  judgeQueuedCalls(): number;
  inFlightRequests(): number;
  judgeEndpoints?(): Array<{ endpoint: string; healthy: boolean; outstanding: number }>;
}

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export class ServerMetrics {
  readonly registry = new MetricsRegistry();
  readonly requests: Counter;
  readonly latency: Histogram;
  readonly items: Counter;
  readonly judgeCalls: Counter;
  readonly cacheHits: Counter;
  readonly judgeErrors: Counter;
  readonly judgeRetries: Counter;
  readonly rewards: Counter;
  readonly fallbacks: Counter;
  readonly deduplicated: Counter;
  readonly rejected: Counter;
  readonly deadlines: Counter;

  constructor(sources: ServerGaugeSources) {
    const registry = this.registry;
    this.requests = registry.register(new Counter('rubricate_http_requests_total', 'HTTP requests answered, by route and status code.', ['route', 'status']));
    this.latency = registry.register(new Histogram('rubricate_http_request_duration_seconds', 'Time from request arrival to answer, by route.', latencyBuckets, ['route']));
    this.rewards = registry.register(new Counter('rubricate_rewards_total', 'Items answered, by outcome (ok, error, fallback).', ['outcome']));
    this.items = registry.register(new Counter('rubricate_items_graded_total', 'Items the grading engine finished, by status.', ['status']));
    this.judgeCalls = registry.register(new Counter('rubricate_judge_calls_total', 'Judge calls made (cache hits excluded).'));
    this.cacheHits = registry.register(new Counter('rubricate_judge_cache_hits_total', 'Judge calls served from the reply cache or an identical call in flight.'));
    this.judgeErrors = registry.register(new Counter('rubricate_judge_errors_total', 'Failed judge calls, by error code (each attempt counts).', ['code']));
    this.judgeRetries = registry.register(new Counter('rubricate_judge_retries_total', 'Judge calls retried.'));
    this.fallbacks = registry.register(new Counter('rubricate_fallback_rewards_total', 'Failed items answered with the configured fallback reward.'));
    this.deduplicated = registry.register(new Counter('rubricate_items_deduplicated_total', 'Items answered by an identical item already being graded.'));
    this.rejected = registry.register(new Counter('rubricate_admission_rejected_total', 'Requests refused because the admission queue was full or the server was draining.', ['reason']));
    this.deadlines = registry.register(new Counter('rubricate_deadline_exceeded_total', 'Items not finished within the request deadline.'));
    registry.register(new Gauge('rubricate_queue_depth', 'Items admitted and not yet graded (waiting for the judge or in flight).', sources.queueDepth));
    registry.register(new Gauge('rubricate_queue_waiting_items', 'Items of requests waiting for room in the admission queue.', sources.queueWaiting));
    registry.register(new Gauge('rubricate_queue_capacity', 'Admission queue capacity in items (--max-queue).', sources.queueCapacity));
    registry.register(new Gauge('rubricate_judge_queued_calls', 'Judge calls waiting for a concurrency slot.', sources.judgeQueuedCalls));
    registry.register(new Gauge('rubricate_http_requests_in_flight', 'HTTP requests being served.', sources.inFlightRequests));
    if (sources.judgeEndpoints) {
      const endpoints = sources.judgeEndpoints;
      registry.register(
        new Gauge('rubricate_judge_endpoint_healthy', 'Whether a pooled judge endpoint is taking traffic (1) or ejected (0).', () =>
          endpoints().map((entry) => ({ labels: { endpoint: entry.endpoint }, value: entry.healthy ? 1 : 0 })),
        ),
      );
      registry.register(
        new Gauge('rubricate_judge_endpoint_outstanding_calls', 'Calls outstanding per pooled judge endpoint.', () =>
          endpoints().map((entry) => ({ labels: { endpoint: entry.endpoint }, value: entry.outstanding })),
        ),
      );
    }
  }

  recordRequest(route: string, status: number, seconds: number): void {
    this.requests.inc({ route, status: String(status) });
    this.latency.observe({ route }, seconds);
  }

  onEngineEvent(event: EngineEvent): void {
    switch (event.type) {
      case 'call':
        if (event.cached) this.cacheHits.inc();
        else this.judgeCalls.inc();
        break;
      case 'judge-error':
        this.judgeErrors.inc({ code: event.code });
        break;
      case 'retry':
        this.judgeRetries.inc();
        break;
      case 'item':
        this.items.inc({ status: event.status });
        break;
    }
  }

  render(): string {
    return this.registry.render();
  }
}
