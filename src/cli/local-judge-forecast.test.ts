import { describe, expect, it } from 'vitest';
import { describeLocalPlan, fanOut, formatDuration, LocalJudgeForecast } from './local-judge-forecast.js';

function forecastWith(plan: Partial<Parameters<typeof describeLocalPlan>[0]> = {}) {
  const lines: string[] = [];
  let clock = 1000;
  const forecast = new LocalJudgeForecast((line) => lines.push(line), { judgeId: 'gguf:model.gguf', explanation: 'short', verdict: 'binary', ...plan }, () => clock);
  return { lines, forecast, advance: (milliseconds: number) => (clock += milliseconds) };
}

describe('local judge forecast', () => {
  it('states the plan at start-up', () => {
    const { lines } = forecastWith();
    expect(lines).toEqual([expect.stringMatching(/^local judge gguf:model\.gguf: one call per criterion reusing the item's KV prefix, short explanations; measure this machine with: rubricate bench-local/)]);
    expect(describeLocalPlan({ judgeId: 'gguf:m', criteriaPerCall: Number.POSITIVE_INFINITY, explanation: 'full', verdict: 'probability' })).toBe('local judge gguf:m: one call per item (all criteria), full explanations, P(met) verdicts');
    expect(describeLocalPlan({ judgeId: 'gguf:m', explanation: 'none', verdict: 'binary', threads: 2 })).toBe(
      "local judge gguf:m: one call per criterion reusing the item's KV prefix, none explanations, 2 llama.cpp threads (--threads N to change)",
    );
    expect(describeLocalPlan({ judgeId: 'gguf:m', explanation: 'short', verdict: 'binary', threads: 2, sequences: 4 })).toBe(
      "local judge gguf:m: one call per criterion reusing the item's KV prefix, short explanations, 4 sequences at once sharing each item's prefix, 2 llama.cpp threads (--threads N to change)",
    );
    expect(describeLocalPlan({ judgeId: 'gguf:m', explanation: 'short', verdict: 'binary', sequences: 1 })).not.toMatch(/sequences/);
  });

  it('names the plan in a few words for the progress bar', () => {
    expect(forecastWith().forecast.progressLabel).toBe('local: per criterion, short');
    expect(forecastWith({ criteriaPerCall: 4, explanation: 'none', verdict: 'probability' }).forecast.progressLabel).toBe('local: 4 per call, none, P(met)');
  });

  it('projects the run from the first graded item, once', () => {
    const { lines, forecast, advance } = forecastWith();
    forecast.setTotal(100);
    advance(20_000);
    forecast.onEvent({ type: 'call', cached: false });
    forecast.onEvent({ type: 'item', status: 'ok' });
    advance(20_000);
    forecast.onEvent({ type: 'item', status: 'ok' });
    expect(lines.slice(1)).toEqual(['local judge: first item graded in 20 s; at this pace 100 items take about 33 min']);
  });

  it('suggests faster settings when the projection is over an hour', () => {
    const { lines, forecast, advance } = forecastWith({ explanation: 'full' });
    forecast.setTotal(1000);
    advance(60_000);
    forecast.onEvent({ type: 'item', status: 'error' });
    expect(lines[1]).toBe('local judge: first item graded in 60 s; at this pace 1000 items take about 16.7 h');
    expect(lines[2]).toMatch(/^local judge: that is a long run; faster: --explanation none .*; or --explanation short; or an endpoint/);
  });

  it('counts no invalid line as a graded item, and formats durations', () => {
    const { lines, forecast } = forecastWith();
    forecast.onEvent({ type: 'item', status: 'invalid' });
    expect(lines).toHaveLength(1);
    expect([formatDuration(42), formatDuration(600), formatDuration(7200)]).toEqual(['42 s', '10 min', '2.0 h']);
    const seen: string[] = [];
    fanOut((event) => seen.push(`a:${event.type}`), undefined, (event) => seen.push(`b:${event.type}`))({ type: 'retry', code: 'X', delayMs: 1 });
    expect(seen).toEqual(['a:retry', 'b:retry']);
  });
});
