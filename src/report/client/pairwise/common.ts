/** What more than one part of the compare view uses: outcome colours, verdict pills, shares as text. */
import { formatPercent, h, isNumber } from '../common.js';
import type { PairVerdictName } from '../pairwise-decode.js';
import type { ShareWithInterval } from '../../types.js';

export type OutcomeKey = 'win' | 'tie' | 'loss' | 'inconsistent';

export const PAIR_OUTCOMES: Array<{ key: OutcomeKey; verdict: PairVerdictName; label: string; color: string }> = [
  { key: 'win', verdict: 'A', label: 'A better', color: '#4f46e5' },
  { key: 'tie', verdict: 'tie', label: 'tie', color: '#cbd5e1' },
  { key: 'loss', verdict: 'B', label: 'B better', color: '#0d9488' },
  { key: 'inconsistent', verdict: 'inconsistent', label: 'order-inconsistent', color: '#f59e0b' }
];
export const PAIR_ERROR_COLOR = '#ef4444';
export const PAIR_INVALID_COLOR = '#991b1b';

/** Label and style of a verdict (A, B, tie, inconsistent, null = no verdict, undefined = not judged). */
export function pairVerdictLook(verdict: PairVerdictName | null | undefined): { key: string; label: string; className: string } {
  if (verdict === 'A') return { key: 'A', label: 'A better', className: 'pair-a' };
  if (verdict === 'B') return { key: 'B', label: 'B better', className: 'pair-b' };
  if (verdict === 'tie') return { key: 'tie', label: 'Tie', className: 'pair-tie' };
  if (verdict === 'inconsistent') return { key: 'inconsistent', label: 'Inconsistent', className: 'pair-inconsistent' };
  if (verdict === null) return { key: 'none', label: 'No verdict', className: 'pair-none' };
  return { key: 'absent', label: 'Not judged', className: 'pair-absent' };
}

export function pairVerdictPill(verdict: PairVerdictName | null | undefined, testid?: string): HTMLElement {
  const look = pairVerdictLook(verdict);
  return h('span', { className: 'verdict ' + look.className, text: look.label, data: testid ? { testid: testid, verdict: look.key } : { verdict: look.key } });
}

export function shareText(share: ShareWithInterval | null | undefined): string {
  if (!share || !isNumber(share.value)) return '—';
  return formatPercent(share.value) + (share.ci95 && isNumber(share.ci95[0]) ? '  (95% CI ' + formatPercent(share.ci95[0]) + ' – ' + formatPercent(share.ci95[1]) + ')' : '');
}
