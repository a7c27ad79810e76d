/**
 * The compare view's pair drawer: the conversation, both responses side by side (the
 * preferred one marked), and each comparison's verdict per presentation order with the
 * judge's explanation.
 */
import { h } from '../common.js';
import { conversation, createDrawer, textsLoading, type Drawer, type DrawerExplorer } from '../drawer.js';
import { rubricateDecodePair, type DecodedComparison, type PairVerdictName } from '../pairwise-decode.js';
import type { CompareReportPayload, PairTexts } from '../../types.js';
import type { TextStore } from '../text-store.js';
import { pairVerdictLook, pairVerdictPill } from './common.js';

/** The drawer over the pairs; a pair's texts load when it opens. */
export function createPairDrawer(payload: CompareReportPayload, textStore: TextStore<PairTexts>, explorer: DrawerExplorer): Drawer {
  return createDrawer({
    explorer: explorer,
    noun: 'pair',
    testid: 'pair-drawer',
    hashKey: 'pair',
    ids: payload.pairs.ids,
    render: render,
    load: function (index, done) { if (!textStore.chunkFor(0, index)) textStore.loadFor(0, index).then(done); }
  });

  function render(index: number) {
    const chunk = textStore.chunkFor(0, index);
    const pair = rubricateDecodePair(payload, chunk, index);
    const verdictBlock = h('div', { className: 'drawer-score' }, [
      h('div', { className: 'faint', text: 'verdict' }),
      h('div', null, [pairVerdictPill(pair.winner, 'drawer-winner')]),
      h('div', { className: 'muted', text: pair.consistent === true ? 'same in both orders' : pair.consistent === false ? 'the orders disagree' : pair.orders.ba === undefined ? 'one order judged' : '' })
    ]);

    const body = h('div', { className: 'pair-drawer-body' });
    if (pair.error) body.appendChild(h('div', { className: 'callout error' }, [h('b', { text: pair.error.code + ': ' }), pair.error.message]));
    if (!chunk) body.appendChild(textsLoading('120px'));
    else {
      conversation(pair.prompt ?? [], 'The prompt was not stored (compared with --no-text).').forEach(function (block) { body.appendChild(block); });
      body.appendChild(h('div', { className: 'block-title', text: 'Responses' }));
      body.appendChild(h('div', { className: 'pair-responses' }, [responseBox('A', pair.response_a ?? null, pair.winner), responseBox('B', pair.response_b ?? null, pair.winner)]));
    }
    // Verdicts after the texts they judge; responses are height-capped so the verdicts stay close.
    body.appendChild(h('div', { className: 'block-title', text: 'Verdicts' }));
    const list = h('div', { data: { testid: 'comparisons' } });
    const all: DecodedComparison[] = [...(pair.overall ? [pair.overall] : []), ...pair.criteria];
    all.forEach(function (comparison) { list.appendChild(comparisonCard(comparison, comparison === pair.overall, Boolean(chunk))); });
    if (all.length === 0) list.appendChild(h('div', { className: 'callout info', text: 'No comparison: the pair could not be read.' }));
    body.appendChild(list);

    return {
      attributes: { 'data-pair-id': pair.id, 'data-texts': chunk ? 'loaded' : 'loading' },
      meta: [
        h('span', { className: 'pill ' + pair.status, text: pair.status }),
        h('span', { className: 'num', text: 'line ' + pair.line }),
        pair.source !== undefined ? h('span', null, ['source ', h('span', { className: 'mono', text: pair.source })]) : null,
        pair.label !== undefined ? h('span', { data: { testid: 'drawer-label' } }, ['gold ', h('b', { text: pair.label }), pair.correct === true ? h('span', { className: 'up', text: ' ✓ matches' }) : pair.correct === false ? h('span', { className: 'down', text: ' ✗ differs' }) : null]) : null
      ],
      summary: verdictBlock,
      body: body
    };
  }
}

function responseBox(name: 'A' | 'B', text: string | null, winner: PairVerdictName | null): HTMLElement {
  const box = h('div', { className: 'response-box pair-response' + (winner === name ? ' preferred' : '') }, [
    h('div', { className: 'pair-response-head' }, [h('b', { text: 'Response ' + name }), winner === name ? h('span', { className: 'verdict ' + (name === 'A' ? 'pair-a' : 'pair-b'), text: 'preferred' }) : null])
  ]);
  if (text === null) box.appendChild(h('div', { className: 'callout info', text: 'Not stored (compared with --no-text).' }));
  else box.appendChild(h('div', { className: 'text-body pair-response-text', text: text, data: { testid: 'response-' + name.toLowerCase() } }));
  return box;
}

function comparisonCard(comparison: DecodedComparison, isOverall: boolean, textsLoaded: boolean): HTMLElement {
  const element = h('div', { className: 'pair-comparison', data: { testid: 'comparison', comparisonId: comparison.id, winner: pairVerdictLook(comparison.winner).key } }, [
    h('div', { className: 'pair-comparison-head' }, [
      h('div', { className: 'pair-comparison-title' }, [
        h('div', { className: 'faint', text: isOverall ? 'Overall' : 'Criterion ' + comparison.id }),
        h('div', { className: 'criterion-text', text: comparison.text, data: { testid: 'comparison-text' } })
      ]),
      pairVerdictPill(comparison.winner, 'comparison-verdict')
    ])
  ]);
  ([{ key: 'ab', label: 'Original order', note: 'A shown first (as response 1)' }, { key: 'ba', label: 'Swapped order', note: 'B shown first (as response 1)' }] as const).forEach(function (order) {
    const verdict = comparison.orders[order.key];
    // An order that was never judged (--no-swap) has nothing to show.
    if (verdict === undefined) return;
    const explanation = comparison.explanations ? comparison.explanations[order.key] : undefined;
    const row = h('div', { className: 'order-row', data: { order: order.key } }, [
      h('div', { className: 'order-label' }, [h('b', { text: order.label }), h('span', { className: 'faint', text: order.note })]),
      pairVerdictPill(verdict, 'order-verdict')
    ]);
    if (explanation !== undefined) row.appendChild(h('div', { className: 'explanation', text: explanation, data: { testid: 'order-explanation' } }));
    else if (!textsLoaded && verdict) row.appendChild(h('div', { className: 'explanation faint', text: 'loading explanation…' }));
    element.appendChild(row);
  });
  if (comparison.error) element.appendChild(h('div', { className: 'callout error' }, [h('b', { text: comparison.error.code + ': ' }), comparison.error.message]));
  return element;
}
