import { describe, expect, it } from 'vitest';
import { isMadeUp, madeUpBy, madeUpNotice, scriptedLabel } from './made-up.js';

describe('madeUpBy: the one rule for made-up verdicts', () => {
  it('names the scripted judge from a spec, a provenance, a jury or a cascade', () => {
    expect(madeUpBy('scripted:mixed')).toBe('scripted:mixed');
    expect(madeUpBy('openai:gpt-4.1')).toBeUndefined();
    expect(madeUpBy({ id: 'scripted:met', model: 'scripted' })).toBe('scripted:met');
    expect(madeUpBy({ judge: { id: 'openai:gpt-4.1+scripted:unmet', model: 'gpt-4.1+scripted' } })).toBe('scripted:unmet');
    expect(madeUpBy({ judge: { id: 'openai:a', model: 'a', jury: { members: [{ judge: 'scripted:met' }], aggregate: 'majority' } } })).toBe('scripted:met');
    expect(madeUpBy({ judge: { id: 'openai:a', model: 'a', cascade: { judges: ['scripted:mixed'], escalate_on: [] } } })).toBe('scripted:mixed');
  });

  it('finds a fake-judge run by its explanations, whatever model its provenance names', () => {
    const line = { id: 'item-1', judge: { id: 'openai:gpt-4.1-mini', model: 'gpt-4.1-mini' }, criteria: [{ id: 'c1', explanation: scriptedLabel }] };
    expect(madeUpBy(line)).toBe('rubricate fake-judge (scripted)');
    const compared = { id: 'pair-1', judge: { id: 'openai:gpt-4.1', model: 'gpt-4.1' }, criteria: [], overall: { explanations: { ab: `Feedback: ${scriptedLabel}.` } } };
    expect(isMadeUp(compared)).toBe(true);
  });

  it('takes a provenance marked synthetic, and a summary that says scripted', () => {
    expect(madeUpBy({ id: 'openai:x', model: 'x', synthetic: true })).toBe('openai:x');
    expect(madeUpBy({ n: 3, scripted: true, scripted_by: 'scripted:met' })).toBe('scripted:met');
    expect(madeUpBy({ n: 3, scripted: true })).toBe('scripted');
  });

  it('leaves a model’s verdicts alone', () => {
    const real = { id: 'item-1', judge: { id: 'openai:gpt-4.1', model: 'gpt-4.1' }, criteria: [{ id: 'c1', explanation: 'The response names the dose.' }] };
    expect(isMadeUp(real)).toBe(false);
    expect(isMadeUp(undefined)).toBe(false);
    expect(isMadeUp({ id: 'scripted:item', criteria: [] })).toBe(false);
  });

  it('words the notice with the judge it names', () => {
    expect(madeUpNotice('scripted:mixed')).toMatch(/^made up: .*scripted judge.*\(scripted:mixed\)$/);
  });
});
