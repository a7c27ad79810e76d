/**
 * The results view's item drawer: the conversation, the response (or the trajectory, its
 * cited steps linked), reference and metadata, and every criterion's verdict, points and
 * explanation, with the baseline's verdict beside it when comparing.
 */
import { rubricateDecodeItem, type DecodedCriterion, type DecodedItem } from '../decode.js';
import { formatPoints, formatScore, formatSigned, h, isNumber } from '../common.js';
import { conversation, createDrawer, textsLoading, type Drawer, type DrawerExplorer } from '../drawer.js';
import { textWithImages, trajectoryView, type TrajectoryView } from '../media.js';
import type { RunTexts } from '../../types.js';
import type { TextStore } from '../text-store.js';
import type { ResultsContext } from './common.js';

interface Outcome {
  className: 'problem' | 'skipped' | 'fail' | 'pass';
  label: string;
  key: string;
}

function criterionOutcome(criterion: DecodedCriterion): Outcome {
  if (criterion.status === 'error') return { className: 'problem', label: 'Error', key: 'error' };
  if (criterion.status === 'skipped') return { className: 'skipped', label: 'Skipped', key: 'skipped' };
  if (criterion.met === null) return { className: 'skipped', label: 'No verdict', key: 'none' };
  const failed = criterion.points < 0 ? criterion.met : !criterion.met;
  return { className: failed ? 'fail' : 'pass', label: criterion.met ? 'Met' : 'Not met', key: criterion.met ? 'met' : 'not-met' };
}

/** The drawer over the run's items; texts of the item (and of its baseline match) load when it opens. */
export function createItemDrawer(context: ResultsContext, textStore: TextStore<RunTexts>, explorer: DrawerExplorer): Drawer {
  const run = context.run, baseline = context.baseline, comparison = context.comparison;
  const baselineLabel = baseline ? baseline.summary.label : 'the baseline';
  return createDrawer({
    explorer: explorer,
    noun: 'item',
    testid: 'drawer',
    hashKey: 'item',
    ids: run.items.ids,
    render: render,
    load: function (index, done) {
      const otherIndex = comparison ? comparison.matchIndex[index] : -1;
      const pending: Array<Promise<unknown>> = [];
      if (!textStore.chunkFor(0, index)) pending.push(textStore.loadFor(0, index));
      if (otherIndex >= 0 && !textStore.chunkFor(1, otherIndex)) pending.push(textStore.loadFor(1, otherIndex));
      if (pending.length) Promise.all(pending).then(done);
    }
  });

  function render(index: number) {
    const chunk = textStore.chunkFor(0, index);
    const item = rubricateDecodeItem(run, chunk, index);
    const otherIndex = comparison ? comparison.matchIndex[index] : -1;
    const other = otherIndex >= 0 && baseline ? rubricateDecodeItem(baseline, textStore.chunkFor(1, otherIndex), otherIndex) : null;

    const scoreBlock = h('div', { className: 'drawer-score' }, [
      h('div', { className: 'faint', text: 'score' }),
      h('div', { className: 'value num', text: formatScore(item.score), data: { testid: 'drawer-score' } })
    ]);
    if (other) {
      const delta = isNumber(item.score) && isNumber(other.score) ? item.score - other.score : null;
      scoreBlock.appendChild(h('div', { className: 'num muted', text: 'baseline ' + formatScore(other.score) }));
      if (delta !== null) scoreBlock.appendChild(h('div', { className: 'num ' + (delta > 0 ? 'up' : delta < 0 ? 'down' : 'faint'), text: formatSigned(delta), style: { 'font-weight': '650' } }));
    }

    const left = h('div', { className: 'drawer-column' });
    if (item.error) left.appendChild(h('div', { className: 'callout error' }, [h('b', { text: item.error.code + ': ' }), item.error.message || '']));
    let trajectory: TrajectoryView | null = null;
    if (!chunk) left.appendChild(textsLoading('200px'));
    else {
      conversation(item.prompt ?? [], 'The prompt was not stored in the results (graded with --no-text).', item.images).forEach(function (block) { left.appendChild(block); });
      left.appendChild(h('div', { className: 'block-title', text: item.trajectory ? 'Trajectory graded' : 'Response graded' }));
      if (item.response === null || item.response === undefined) left.appendChild(h('div', { className: 'callout info', text: 'The response was not stored in the results (graded with --no-text).' }));
      else if (item.trajectory) {
        const cited: Record<number, string[]> = {};
        item.criteria.forEach(function (criterion) { (criterion.steps || []).forEach(function (step) { (cited[step] = cited[step] || []).push(criterion.id); }); });
        trajectory = trajectoryView(item.trajectory, item.images, cited);
        left.appendChild(trajectory.element);
      } else left.appendChild(h('div', { className: 'response-box' }, [textWithImages(item.response, item.images, { testid: 'response' })]));
      if (item.reference !== null && item.reference !== undefined) {
        left.appendChild(h('div', { className: 'block-title', text: 'Reference' }));
        left.appendChild(h('div', { className: 'message' }, [textWithImages(item.reference, item.images)]));
      }
      if (item.metadata !== null) {
        left.appendChild(h('div', { className: 'block-title', text: 'Metadata' }));
        left.appendChild(h('pre', { className: 'message mono text-body', text: item.metadata }));
      }
    }
    const right = h('div', { className: 'drawer-column' }, criteriaBlocks(item, other, baselineLabel, Boolean(chunk), trajectory));

    return {
      attributes: { 'data-item-id': item.id },
      meta: [
        h('span', { className: 'pill ' + item.status, text: item.status }),
        item.gated ? h('span', { className: 'pill invalid', text: 'gated by a hard rule' }) : null,
        h('span', { className: 'num', text: 'line ' + item.line }),
        item.rubric_id ? h('span', null, ['rubric ', h('span', { className: 'mono', text: item.rubric_id })]) : null
      ],
      tags: item.tags.map(function (tag) { return h('span', { className: 'chip', text: tag, title: tag }); }),
      summary: scoreBlock,
      body: h('div', { className: 'drawer-body' }, [left, right])
    };
  }
}

/** The criteria with their verdicts, points and explanations; when comparing, the baseline's verdict beside each. */
function criteriaBlocks(item: DecodedItem, other: DecodedItem | null, baselineLabel: string, textsLoaded: boolean, trajectory: TrajectoryView | null): HTMLElement[] {
  const otherById: Record<string, DecodedCriterion> = {};
  if (other) other.criteria.forEach(function (criterion) { if (!(criterion.id in otherById)) otherById[criterion.id] = criterion; });
  let achieved = 0, positive = 0, passed = 0, graded = 0;
  item.criteria.forEach(function (criterion) {
    if (criterion.points > 0) positive += criterion.points;
    if (criterion.status !== 'ok' || criterion.met === null) return;
    graded += 1;
    const fraction = isNumber(criterion.value) ? criterion.value : criterion.met ? 1 : 0;
    achieved += criterion.points * fraction;
    if (criterionOutcome(criterion).className === 'pass') passed += 1;
  });
  const blocks = [h('div', { className: 'block-title', text: 'Criteria' }), h('div', { className: 'criteria-summary' }, [
    h('span', { className: 'num', text: passed + ' of ' + graded + ' graded criteria earned their points' }),
    h('span', { className: 'num muted', text: 'points ' + formatScore(achieved, Number.isInteger(achieved) ? 0 : 2) + ' of ' + formatScore(positive, Number.isInteger(positive) ? 0 : 2) })
  ])];
  const list = h('div', { data: { testid: 'criteria' } });
  item.criteria.forEach(function (criterion) { list.appendChild(criterionCard(criterion, otherById[criterion.id], baselineLabel, textsLoaded, trajectory)); });
  if (item.criteria.length === 0) list.appendChild(h('div', { className: 'callout info', text: 'No criteria (the item could not be read).' }));
  blocks.push(list);
  return blocks;
}

/** One criterion; previous is the same criterion in the baseline (its explanation shown when the verdict flipped). */
function criterionCard(criterion: DecodedCriterion, previous: DecodedCriterion | undefined, baselineLabel: string, textsLoaded: boolean, trajectory: TrajectoryView | null): HTMLElement {
  const outcome = criterionOutcome(criterion);
  const previousOutcome = previous ? criterionOutcome(previous) : null;
  const flipped = previous && previous.status === 'ok' && criterion.status === 'ok' && previous.met !== null && criterion.met !== null && previous.met !== criterion.met;
  const verdicts = h('div', { className: 'verdicts' }, [h('span', { className: 'verdict ' + outcome.className, text: outcome.label, data: { testid: 'verdict' } })]);
  if (previousOutcome) verdicts.appendChild(h('span', { className: 'verdict ghost', text: 'was ' + previousOutcome.label.toLowerCase(), title: 'verdict in ' + baselineLabel }));
  const metaParts = [h('span', { className: 'chip', text: criterion.source === 'check' ? 'check' : 'judge' })];
  if (criterion.kind === 'hard_rule') metaParts.push(h('span', { className: 'chip', text: 'hard rule' }));
  criterion.tags.forEach(function (tag) { metaParts.push(h('span', { className: 'chip', text: tag, title: tag })); });
  metaParts.push(h('span', { className: 'mono', text: criterion.id }));
  if (criterion.label !== undefined) metaParts.push(h('span', { text: 'label: ' + criterion.label }));
  if (isNumber(criterion.value)) metaParts.push(h('span', { className: 'num', text: 'value ' + formatScore(criterion.value, 2) }));
  if (isNumber(criterion.probability)) metaParts.push(h('span', { className: 'num', text: 'p(met) ' + formatScore(criterion.probability, 3) }));
  const element = h('div', {
    className: 'criterion ' + outcome.className + (flipped ? ' flipped' : ''),
    data: { criterionId: criterion.id, verdict: outcome.key, points: criterion.points }
  }, [
    verdicts,
    h('div', { className: 'criterion-text', text: criterion.text }),
    h('div', { className: 'points num ' + (criterion.points < 0 ? 'negative' : 'positive'), text: formatPoints(criterion.points), data: { testid: 'points' } }),
    h('div', { className: 'criterion-meta' }, metaParts)
  ]);
  if (criterion.explanation) element.appendChild(h('div', { className: 'explanation', data: { testid: 'explanation' } }, [h('b', { text: criterion.source === 'check' ? 'Check: ' : 'Judge: ' }), criterion.explanation]));
  else if (!textsLoaded && criterion.source === 'judge' && criterion.status === 'ok') element.appendChild(h('div', { className: 'explanation faint', text: 'loading explanation…' }));
  if (criterion.error) element.appendChild(h('div', { className: 'explanation' }, [h('b', { text: criterion.error.code + ': ' }), criterion.error.message]));
  if (criterion.skip_reason) element.appendChild(h('div', { className: 'explanation', text: 'Skipped: ' + criterion.skip_reason }));
  if (criterion.steps && criterion.steps.length > 0) {
    element.appendChild(h('div', { className: 'cited-steps', data: { testid: 'cited-steps' } }, [h('span', { text: 'cites' })].concat(criterion.steps.map(function (step) {
      return h('button', { text: 'step ' + step, attrs: { type: 'button', disabled: trajectory ? null : 'disabled', title: trajectory ? 'show step ' + step : 'the trajectory is not loaded' }, data: { testid: 'cited-step', step: step }, on: { click: function () { if (trajectory) trajectory.reveal(step); } } });
    }))));
  }
  if (flipped && previous.explanation) element.appendChild(h('div', { className: 'explanation' }, [h('b', { text: 'Baseline ' + (previous.source === 'check' ? 'check' : 'judge') + ': ' }), previous.explanation]));
  return element;
}
