/**
 * The results view's item drawer: the conversation, the response (rendered as Markdown or raw,
 * or the trajectory, its cited steps linked), reference and metadata, and every criterion with
 * its verdict, points, explanation, the judge call behind it when the run kept it, human labels
 * when the report has them, and the reviewer's own answer; the baseline's verdict beside each
 * when comparing. The criteria can be filtered (not met, flipped, errors, unreviewed, disagreed).
 */
import { rubricateDecodeItem, type DecodedCriterion, type DecodedItem, type DecodedJudgeCall } from '../decode.js';
import { formatInteger, formatPoints, formatScore, formatSigned, h, isNumber, tabs } from '../common.js';
import { conversation, createDrawer, textsLoading, type Drawer, type DrawerContent, type DrawerExplorer } from '../drawer.js';
import { looksLikeMarkdown, renderMarkdown } from '../markdown.js';
import { textWithImages, trajectoryView, type TrajectoryView } from '../media.js';
import type { ReportImage, RunTexts } from '../../types.js';
import type { TextStore } from '../text-store.js';
import type { LabelLookup, ResultsContext } from './common.js';
import { disagrees, reviewControl, type ReviewStore } from './review.js';

interface Outcome {
  className: 'problem' | 'skipped' | 'fail' | 'pass';
  label: string;
  key: string;
}

export function criterionOutcome(criterion: Pick<DecodedCriterion, 'status' | 'met' | 'points'>): Outcome {
  if (criterion.status === 'error') return { className: 'problem', label: 'Error', key: 'error' };
  if (criterion.status === 'skipped') return { className: 'skipped', label: 'Skipped', key: 'skipped' };
  if (criterion.met === null) return { className: 'skipped', label: 'No verdict', key: 'none' };
  const failed = criterion.points < 0 ? criterion.met : !criterion.met;
  return { className: failed ? 'fail' : 'pass', label: criterion.met ? 'Met' : 'Not met', key: criterion.met ? 'met' : 'not-met' };
}

/** The criteria a drawer lists: every one, or those a filter keeps. */
type CriteriaFilter = 'all' | 'cost' | 'flipped' | 'errors' | 'unreviewed' | 'disagree' | 'labels';

/** Kept from item to item while stepping through the drawer. */
const shown = { filter: 'all' as CriteriaFilter, response: 'auto' as 'auto' | 'rendered' | 'raw' };

export interface ItemDrawer extends Drawer {
  /** Draws the open item again (blind mode changed). */
  refresh(): void;
}

/** What the item drawer reads, and the item it shows (-1 when closed); `reopen` draws that item again. */
interface ItemDrawerState {
  context: ResultsContext;
  baselineLabel: string;
  textStore: TextStore<RunTexts>;
  reviews: ReviewStore;
  labels: LabelLookup | null;
  openIndex: number;
  reopen(): void;
}

/** The drawer over the run's items; texts of the item (and of its baseline match) load when it opens. */
export function createItemDrawer(context: ResultsContext, textStore: TextStore<RunTexts>, explorer: DrawerExplorer, reviews: ReviewStore, labels: LabelLookup | null): ItemDrawer {
  const run = context.run, baseline = context.baseline, comparison = context.comparison;
  const state: ItemDrawerState = {
    context: context,
    baselineLabel: baseline ? baseline.summary.label : 'the baseline',
    textStore: textStore,
    reviews: reviews,
    labels: labels,
    openIndex: -1,
    reopen: function () { drawer.open(state.openIndex); }
  };
  const drawer = createDrawer({
    explorer: explorer,
    noun: 'item',
    testid: 'drawer',
    hashKey: 'item',
    ids: run.items.ids,
    render: function (index) { return renderItem(state, index); },
    load: function (index, done) {
      const otherIndex = comparison ? comparison.matchIndex[index] : -1;
      const pending: Array<Promise<unknown>> = [];
      if (!textStore.chunkFor(0, index)) pending.push(textStore.loadFor(0, index));
      if (otherIndex >= 0 && !textStore.chunkFor(1, otherIndex)) pending.push(textStore.loadFor(1, otherIndex));
      if (pending.length) Promise.all(pending).then(done);
    }
  });
  return {
    open: function (index) { drawer.open(index); },
    close: drawer.close,
    refresh: function () { if (state.openIndex >= 0) drawer.open(state.openIndex); }
  };
}

function renderItem(state: ItemDrawerState, index: number): DrawerContent {
  const run = state.context.run, baseline = state.context.baseline, comparison = state.context.comparison, reviews = state.reviews;
  state.openIndex = index;
  const chunk = state.textStore.chunkFor(0, index);
  const item = rubricateDecodeItem(run, chunk, index);
  const otherIndex = comparison ? comparison.matchIndex[index] : -1;
  const other = otherIndex >= 0 && baseline ? rubricateDecodeItem(baseline, state.textStore.chunkFor(1, otherIndex), otherIndex) : null;
  const hidden = reviews.blind && item.criteria.some(function (criterion) { return !reviews.get(item.id, criterion.id); });
  const texts = itemTexts(item, Boolean(chunk));
  const right = h('div', { className: 'drawer-column' }, stepRewardsBlock(item, hidden).concat(criteriaBlocks(state, item, index, other, Boolean(chunk), texts.trajectory, hidden)));
  return {
    attributes: { 'data-item-id': item.id },
    meta: [
      h('span', { className: 'pill ' + item.status, text: item.status }),
      item.gated ? h('span', { className: 'pill invalid', text: 'gated by a hard rule' }) : null,
      h('span', { className: 'num', text: 'line ' + item.line }),
      item.rubric_id ? h('span', null, ['rubric ', h('span', { className: 'mono', text: item.rubric_id })]) : null
    ],
    tags: item.tags.map(function (tag) { return h('span', { className: 'chip', text: tag, title: tag }); }),
    summary: scoreBlock(item, other, hidden),
    body: h('div', { className: 'drawer-body' }, [texts.element, right])
  };
}

/** The item's score (hidden in blind review until every criterion is answered), with the baseline's and the difference. */
function scoreBlock(item: DecodedItem, other: DecodedItem | null, hidden: boolean): HTMLElement {
  const block = h('div', { className: 'drawer-score' }, [
    h('div', { className: 'faint', text: 'score' }),
    h('div', { className: 'value num', text: hidden ? 'hidden' : formatScore(item.score), title: hidden ? 'blind review: shown once every criterion is reviewed' : null, data: { testid: 'drawer-score' } })
  ]);
  if (other && !hidden) {
    const delta = isNumber(item.score) && isNumber(other.score) ? item.score - other.score : null;
    block.appendChild(h('div', { className: 'num muted', text: 'baseline ' + formatScore(other.score) }));
    if (delta !== null) block.appendChild(h('div', { className: 'num ' + (delta > 0 ? 'up' : delta < 0 ? 'down' : 'faint'), text: formatSigned(delta), style: { 'font-weight': '650' } }));
  }
  return block;
}

/**
 * Process rewards: each trajectory step's reward from the step criteria (hidden in blind review,
 * as the score is). A step not graded shows as an error, never as 0.
 */
function stepRewardsBlock(item: DecodedItem, hidden: boolean): HTMLElement[] {
  if (!item.step_rewards) return [];
  const rewards = hidden ? [h('span', { className: 'num muted', text: 'blind review: shown once every criterion is reviewed' })] : item.step_rewards.map(function (reward, index) {
    return h('span', {
      className: 'chip num' + (reward === null ? ' error' : ''),
      text: 'step ' + (index + 1) + ': ' + (reward === null ? 'error (not graded)' : formatScore(reward, 3)),
      title: reward === null ? 'a step criterion is in error at this step: no reward' : null,
      data: { testid: 'step-reward', step: index + 1, reward: reward === null ? 'error' : String(reward) }
    });
  });
  return [h('div', { className: 'block-title', text: 'Step rewards' }), h('div', { className: 'criteria-summary', data: { testid: 'step-rewards' } }, rewards)];
}

/** The left column: the item's error, the conversation, the response (or its trajectory, whose steps criteria cite), reference and metadata. */
function itemTexts(item: DecodedItem, textsLoaded: boolean): { element: HTMLElement; trajectory: TrajectoryView | null } {
  const left = h('div', { className: 'drawer-column' });
  if (item.error) left.appendChild(h('div', { className: 'callout error' }, [h('b', { text: item.error.code + ': ' }), item.error.message || '']));
  let trajectory: TrajectoryView | null = null;
  if (!textsLoaded) left.appendChild(textsLoading('200px'));
  else {
    conversation(item.prompt ?? [], 'The prompt was not stored in the results (graded with --no-text).', item.images).forEach(function (block) { left.appendChild(block); });
    if (item.response === null || item.response === undefined) {
      left.appendChild(h('div', { className: 'block-title', text: 'Response graded' }));
      left.appendChild(h('div', { className: 'callout info', text: 'The response was not stored in the results (graded with --no-text).' }));
    } else if (item.trajectory) {
      left.appendChild(h('div', { className: 'block-title', text: 'Trajectory graded' }));
      const cited: Record<number, string[]> = {};
      item.criteria.forEach(function (criterion) { (criterion.steps || []).forEach(function (step) { (cited[step] = cited[step] || []).push(criterion.id); }); });
      trajectory = trajectoryView(item.trajectory, item.images, cited);
      left.appendChild(trajectory.element);
    } else responseBlock(item.response, item.images).forEach(function (block) { left.appendChild(block); });
    if (item.reference !== null && item.reference !== undefined) {
      left.appendChild(h('div', { className: 'block-title', text: 'Reference' }));
      left.appendChild(h('div', { className: 'message' }, [textWithImages(item.reference, item.images)]));
    }
    if (item.metadata !== null) {
      left.appendChild(h('div', { className: 'block-title', text: 'Metadata' }));
      left.appendChild(h('pre', { className: 'message mono text-body', text: item.metadata }));
    }
  }
  return { element: left, trajectory: trajectory };
}

/** An item's criteria as the drawer lists them: the filter's test per criterion, the baseline's verdicts, and where they are drawn. */
interface CriteriaListing {
  item: DecodedItem;
  firstPosition: number;
  otherById: Record<string, DecodedCriterion>;
  flippedOf(criterion: DecodedCriterion): boolean;
  keeps: Record<CriteriaFilter, (criterion: DecodedCriterion, position: number) => boolean>;
  textsLoaded: boolean;
  trajectory: TrajectoryView | null;
  list: HTMLElement;
  count: HTMLElement;
}

/** The criteria with their verdicts, points and explanations, behind the filter tabs. */
function criteriaBlocks(state: ItemDrawerState, item: DecodedItem, index: number, other: DecodedItem | null, textsLoaded: boolean, trajectory: TrajectoryView | null, hidden: boolean): HTMLElement[] {
  const reviews = state.reviews, labels = state.labels;
  const otherById: Record<string, DecodedCriterion> = {};
  if (other) other.criteria.forEach(function (criterion) { if (!(criterion.id in otherById)) otherById[criterion.id] = criterion; });
  const tally = pointsTally(item);
  const flippedOf = function (criterion: DecodedCriterion): boolean {
    const previous = otherById[criterion.id];
    return Boolean(previous) && previous.status === 'ok' && criterion.status === 'ok' && previous.met !== null && criterion.met !== null && previous.met !== criterion.met;
  };
  const keeps: Record<CriteriaFilter, (criterion: DecodedCriterion, position: number) => boolean> = {
    all: function () { return true; },
    cost: function (criterion) { return criterionOutcome(criterion).className === 'fail'; },
    flipped: flippedOf,
    errors: function (criterion) { return criterion.status === 'error'; },
    unreviewed: function (criterion) { return !reviews.get(item.id, criterion.id); },
    disagree: function (criterion) { return disagrees(reviews.get(item.id, criterion.id), criterion.status === 'ok' ? criterion.met : null); },
    labels: function (criterion, position) { return labels !== null && labels.disagrees(position); }
  };
  const options: Array<{ value: CriteriaFilter; label: string }> = [{ value: 'all', label: 'All' }, { value: 'cost', label: 'Not met' }];
  if (other) options.push({ value: 'flipped', label: 'Flipped' });
  options.push({ value: 'errors', label: 'Errors' }, { value: 'unreviewed', label: 'Unreviewed' }, { value: 'disagree', label: 'I disagree' });
  if (labels) options.push({ value: 'labels', label: 'Labels disagree' });
  if (!options.some(function (option) { return option.value === shown.filter; })) shown.filter = 'all';

  const listing: CriteriaListing = {
    item: item, firstPosition: state.context.run.items.criteriaOffsets[index], otherById: otherById, flippedOf: flippedOf, keeps: keeps, textsLoaded: textsLoaded, trajectory: trajectory,
    list: h('div', { data: { testid: 'criteria' } }),
    count: h('span', { className: 'num faint', data: { testid: 'criteria-shown' } })
  };
  drawCriteria(state, listing);
  return [
    h('div', { className: 'block-title', text: 'Criteria' }),
    h('div', { className: 'criteria-summary' }, hidden ? [h('span', { className: 'num muted', text: 'blind review: verdicts show as you answer' })] : [
      h('span', { className: 'num', text: tally.passed + ' of ' + tally.graded + ' graded criteria earned their points' }),
      h('span', { className: 'num muted', text: 'points ' + formatScore(tally.achieved, Number.isInteger(tally.achieved) ? 0 : 2) + ' of ' + formatScore(tally.positive, Number.isInteger(tally.positive) ? 0 : 2) })
    ]),
    h('div', { className: 'criteria-filter', data: { testid: 'criteria-filter' } }, [tabs(options, shown.filter, function (value) { shown.filter = value; drawCriteria(state, listing); }), listing.count, blindToggle(state)]),
    listing.list
  ];
}

/** Points achieved of the positive points possible, and criteria graded and passed. */
function pointsTally(item: DecodedItem): { achieved: number; positive: number; passed: number; graded: number } {
  let achieved = 0, positive = 0, passed = 0, graded = 0;
  item.criteria.forEach(function (criterion) {
    if (criterion.points > 0) positive += criterion.points;
    if (criterion.status !== 'ok' || criterion.met === null) return;
    graded += 1;
    const fraction = isNumber(criterion.value) ? criterion.value : criterion.met ? 1 : 0;
    achieved += criterion.points * fraction;
    if (criterionOutcome(criterion).className === 'pass') passed += 1;
  });
  return { achieved: achieved, positive: positive, passed: passed, graded: graded };
}

/** The criteria the current filter keeps, and the count line. */
function drawCriteria(state: ItemDrawerState, listing: CriteriaListing): void {
  const item = listing.item, list = listing.list;
  list.textContent = '';
  let listed = 0;
  item.criteria.forEach(function (criterion, offset) {
    if (!listing.keeps[shown.filter](criterion, listing.firstPosition + offset)) return;
    listed += 1;
    list.appendChild(criterionCard(state, item, criterion, listing.firstPosition + offset, listing.otherById[criterion.id], listing.flippedOf(criterion), listing.textsLoaded, listing.trajectory));
  });
  listing.count.textContent = listed === item.criteria.length ? '' : listed + ' of ' + item.criteria.length + ' shown';
  if (item.criteria.length === 0) list.appendChild(h('div', { className: 'callout info', text: 'No criteria (the item could not be read).' }));
  else if (listed === 0) list.appendChild(h('div', { className: 'callout info', text: 'No criterion of this item matches the filter.' }));
}

/** Blind review from inside the drawer (the page's toggle is behind it). */
function blindToggle(state: ItemDrawerState): HTMLElement {
  const box = h('input', { attrs: { type: 'checkbox' }, data: { testid: 'drawer-blind' } });
  box.checked = state.reviews.blind;
  box.addEventListener('change', function () {
    state.reviews.blind = box.checked;
    if (state.openIndex >= 0) state.reopen();
  });
  return h('label', { className: 'toggle', title: "hide the judge's verdict and explanation until you have answered", style: { 'margin-left': 'auto' } }, [box, 'blind']);
}

/** One criterion; previous is the same criterion in the baseline (its explanation shown when the verdict flipped). */
function criterionCard(state: ItemDrawerState, item: DecodedItem, criterion: DecodedCriterion, position: number, previous: DecodedCriterion | undefined, flipped: boolean, textsLoaded: boolean, trajectory: TrajectoryView | null): HTMLElement {
  const reviews = state.reviews;
  const review = reviews.get(item.id, criterion.id);
  const judgeMet = criterion.status === 'ok' ? criterion.met : null;
  const concealed = reviews.blind && !review;
  const outcome = criterionOutcome(criterion);
  const previousOutcome = previous ? criterionOutcome(previous) : null;
  const verdicts = h('div', { className: 'verdicts' }, [concealed
    ? h('span', { className: 'verdict ghost', text: 'hidden', title: 'blind review: answer to see the judge', data: { testid: 'verdict' } })
    : h('span', { className: 'verdict ' + outcome.className, text: outcome.label, data: { testid: 'verdict' } })]);
  if (previousOutcome && !concealed) verdicts.appendChild(h('span', { className: 'verdict ghost', text: 'was ' + previousOutcome.label.toLowerCase(), title: 'verdict in ' + state.baselineLabel }));
  const element = h('div', {
    className: 'criterion ' + (concealed ? 'skipped blind' : outcome.className) + (flipped && !concealed ? ' flipped' : ''),
    data: { criterionId: criterion.id, verdict: concealed ? 'hidden' : outcome.key, points: criterion.points }
  }, [
    verdicts,
    h('div', { className: 'criterion-text', text: criterion.text }),
    h('div', { className: 'points num ' + (criterion.points < 0 ? 'negative' : 'positive'), text: formatPoints(criterion.points), data: { testid: 'points' } }),
    h('div', { className: 'criterion-meta' }, criterionMeta(criterion, concealed))
  ]);
  if (!concealed) appendCriterionDetails(state, element, item, criterion, position, previous, flipped, textsLoaded);
  if (criterion.steps && criterion.steps.length > 0) {
    element.appendChild(h('div', { className: 'cited-steps', data: { testid: 'cited-steps' } }, [h('span', { text: 'cites' })].concat(criterion.steps.map(function (step) {
      return h('button', { text: 'step ' + step, attrs: { type: 'button', disabled: trajectory ? null : 'disabled', title: trajectory ? 'show step ' + step : 'the trajectory is not loaded' }, data: { testid: 'cited-step', step: step }, on: { click: function () { if (trajectory) trajectory.reveal(step); } } });
    }))));
  }
  element.appendChild(reviewControl(reviews, item.id, criterion.id, judgeMet, function () {
    // The last answer of a blind review reveals the item's score: draw it all again.
    if (reviews.blind && item.criteria.every(function (each) { return reviews.get(item.id, each.id); })) { state.reopen(); return; }
    // Otherwise answering changes this card only (blind mode reveals its verdict); the column keeps its scroll.
    element.replaceWith(criterionCard(state, item, criterion, position, previous, flipped, textsLoaded, trajectory));
  }));
  return element;
}

/** The criterion's source, kind, tags and id, then (unless concealed) its label, value, probabilities and cascade. */
function criterionMeta(criterion: DecodedCriterion, concealed: boolean): HTMLElement[] {
  const metaParts = [h('span', { className: 'chip', text: criterion.source === 'check' ? 'check' : 'judge' })];
  if (criterion.kind === 'hard_rule') metaParts.push(h('span', { className: 'chip', text: 'hard rule' }));
  if (criterion.process) metaParts.push(h('span', { className: 'chip', text: 'per step · ' + stepRule(criterion.process), title: 'judged at every step of the trajectory, folded by this rule', data: { testid: 'step-rule' } }));
  criterion.tags.forEach(function (tag) { metaParts.push(h('span', { className: 'chip', text: tag, title: tag })); });
  metaParts.push(h('span', { className: 'mono', text: criterion.id }));
  if (!concealed) {
    if (criterion.label !== undefined) metaParts.push(h('span', { text: 'label: ' + criterion.label }));
    if (isNumber(criterion.value)) metaParts.push(h('span', { className: 'num', text: 'value ' + formatScore(criterion.value, 2) }));
    if (isNumber(criterion.probability)) metaParts.push(h('span', { className: 'num', text: 'p(met) ' + formatScore(criterion.probability, 3) }));
    if (isNumber(criterion.expected_score)) metaParts.push(h('span', { className: 'num', text: 'expected score ' + formatScore(criterion.expected_score, 3) }));
    if (criterion.cascade) metaParts.push(h('span', { className: 'chip', text: 'decided by ' + criterion.cascade.decided_by, title: criterion.cascade.escalations.map(function (step) { return step.judge + ': ' + step.reason + (isNumber(step.probability) ? ' (p ' + formatScore(step.probability, 2) + ')' : ''); }).join('; ') || 'no escalation', data: { testid: 'cascade' } }));
  }
  return metaParts;
}

/** What a revealed criterion shows under its text: explanation, error, skip reason, the baseline's explanation when it flipped, turns, labels and the judge calls behind it. */
function appendCriterionDetails(state: ItemDrawerState, element: HTMLElement, item: DecodedItem, criterion: DecodedCriterion, position: number, previous: DecodedCriterion | undefined, flipped: boolean, textsLoaded: boolean): void {
  const labels = state.labels;
  if (criterion.explanation) element.appendChild(h('div', { className: 'explanation', data: { testid: 'explanation' } }, [h('b', { text: criterion.source === 'check' ? 'Check: ' : 'Judge: ' }), criterion.explanation]));
  else if (!textsLoaded && criterion.source === 'judge' && criterion.status === 'ok') element.appendChild(h('div', { className: 'explanation faint', text: 'loading explanation…' }));
  if (criterion.error) element.appendChild(h('div', { className: 'explanation' }, [h('b', { text: criterion.error.code + ': ' }), criterion.error.message]));
  if (criterion.skip_reason) element.appendChild(h('div', { className: 'explanation', text: 'Skipped: ' + criterion.skip_reason }));
  if (flipped && previous && previous.explanation) element.appendChild(h('div', { className: 'explanation' }, [h('b', { text: 'Baseline ' + (previous.source === 'check' ? 'check' : 'judge') + ': ' }), previous.explanation]));
  if (criterion.turns) element.appendChild(turnsBlock(criterion.turns));
  if (criterion.tool_calls) element.appendChild(toolCallsBlock(criterion.tool_calls));
  if (criterion.process) element.appendChild(processBlock(criterion.process));
  const labelled = labels ? labels.at(position) : null;
  if (labelled) {
    element.appendChild(h('div', { className: 'labels-line' + (labels!.disagrees(position) ? ' disagree' : ''), data: { testid: 'labels' } }, [
      h('b', { text: 'Labels: ' }),
      'met ×' + labelled[0] + ', not met ×' + labelled[1] + (labels!.disagrees(position) ? ' · the majority disagrees with the judge' : '')
    ]));
  }
  const calls = (item.calls || []).filter(function (call) { return call.criteria.indexOf(criterion.id) >= 0; });
  calls.forEach(function (call, number) { element.appendChild(judgeCallBlock(call, number, calls.length)); });
}

/** A per-turn criterion's verdicts, one row per turn, and how they fold into the criterion's. */
function turnsBlock(turns: NonNullable<DecodedCriterion['turns']>): HTMLElement {
  const rows = turns.verdicts.map(function (verdict) {
    const outcome = verdict.status !== 'ok' ? 'error' : verdict.met === true ? 'met' : verdict.met === false ? 'not met' : 'no verdict';
    return h('li', { data: { testid: 'turn', turn: verdict.turn, verdict: outcome } }, [
      h('b', { text: 'turn ' + verdict.turn + ': ' + outcome }),
      verdict.explanation ? ' ' + verdict.explanation : '',
      verdict.error ? ' ' + verdict.error.code + ': ' + verdict.error.message : ''
    ]);
  });
  return h('div', { className: 'explanation turns', data: { testid: 'turns' } }, [h('span', { text: 'per turn (' + turns.aggregate + ' of the turns):' }), h('ul', {}, rows)]);
}

/** A step criterion's rule: `min`, `mean`, `last`, or `discounted γ=0.9`. */
function stepRule(process: NonNullable<DecodedCriterion['process']>): string {
  return process.aggregate === 'discounted' && isNumber(process.gamma) ? 'discounted γ=' + process.gamma : process.aggregate;
}

/** A step criterion's verdicts, one row per trajectory step, and the rule folding them; a step in error shows its reason, never a 0. */
function processBlock(process: NonNullable<DecodedCriterion['process']>): HTMLElement {
  const rows = process.verdicts.map(function (verdict) {
    const outcome = verdict.status === 'error' ? 'error' : verdict.status === 'skipped' ? 'skipped' : verdict.met === true ? 'met' : verdict.met === false ? 'not met' : 'no verdict';
    const graded = verdict.status === 'ok';
    return h('li', { data: { testid: 'process-step', step: verdict.step, verdict: outcome } }, [
      h('b', { text: 'step ' + verdict.step + ': ' + outcome }),
      graded && isNumber(verdict.value) ? ' · value ' + formatScore(verdict.value, 2) : '',
      graded && verdict.label !== undefined ? ' · label ' + verdict.label : '',
      verdict.explanation ? ' ' + verdict.explanation : '',
      verdict.error ? ' ' + verdict.error.code + ': ' + verdict.error.message : ''
    ]);
  });
  return h('div', { className: 'explanation turns process', data: { testid: 'process' } }, [h('span', { text: 'per step (' + stepRule(process) + ' of the steps):' }), h('ol', {}, rows)]);
}

/** An agentic judge's tool calls before the verdict, in order, each with what came back or why it failed. */
function toolCallsBlock(calls: NonNullable<DecodedCriterion['tool_calls']>): HTMLElement {
  const rows = calls.map(function (call) {
    return h('li', { data: { testid: 'tool-call', outcome: call.outcome } }, [h('b', { text: call.name + ' ' + call.arguments + ': ' }), (call.outcome === 'error' ? 'failed: ' : '') + call.summary]);
  });
  return h('div', { className: 'explanation tool-calls', data: { testid: 'tool-calls' } }, [h('span', { text: 'tool calls before the verdict:' }), h('ol', {}, rows)]);
}

/** The response, as rendered Markdown or as raw text (a choice kept from item to item). */
function responseBlock(response: string, images: readonly ReportImage[] | undefined): HTMLElement[] {
  const markdown = looksLikeMarkdown(response);
  const holder = h('div', { className: 'response-box' });
  const title = h('div', { className: 'block-title response-title' }, ['Response graded']);
  function draw(): void {
    holder.textContent = '';
    // Image placeholders are shown as images in the raw text, which is the default when there are any.
    const rendered = markdown && (shown.response === 'rendered' || (shown.response === 'auto' && !(images && images.length)));
    holder.appendChild(rendered ? renderMarkdownWithTestId(response) : textWithImages(response, images, { testid: 'response' }));
  }
  if (markdown) {
    const initial = shown.response === 'raw' || (shown.response === 'auto' && images && images.length) ? 'raw' : 'rendered';
    title.appendChild(tabs([{ value: 'rendered', label: 'Rendered' }, { value: 'raw', label: 'Raw' }], initial, function (value) { shown.response = value as 'rendered' | 'raw'; draw(); }));
  }
  draw();
  return [title, holder];
}

function renderMarkdownWithTestId(text: string): HTMLElement {
  const element = renderMarkdown(text);
  element.dataset.testid = 'response-rendered';
  return element;
}

/** A kept judge call: what was sent, what came back, how long it took. */
function judgeCallBlock(call: DecodedJudgeCall, number: number, of: number): HTMLElement {
  const summaryParts = ['Judge call' + (of > 1 ? ' ' + (number + 1) + ' of ' + of : '')];
  if (call.judge) summaryParts.push(call.judge);
  if (call.latencyMs !== null) summaryParts.push(formatInteger(call.latencyMs) + ' ms');
  summaryParts.push(call.attempts === 0 ? 'reply from the cache' : call.attempts + (call.attempts === 1 ? ' attempt' : ' attempts'));
  if (call.criteria.length > 1) summaryParts.push('decided ' + call.criteria.length + ' criteria');
  if (call.error) summaryParts.push('failed: ' + call.error.code);
  const body: Array<Node | null> = [];
  call.messages.forEach(function (message) {
    body.push(h('div', { className: 'call-part', text: 'Message · ' + message.role }), h('pre', { className: 'call-text mono', text: message.content, data: { testid: 'call-message' } }));
  });
  if (call.reasoning !== null) body.push(h('div', { className: 'call-part', text: 'Reasoning returned' }), h('pre', { className: 'call-text mono', text: call.reasoning }));
  if (call.reply !== null) body.push(h('div', { className: 'call-part', text: 'Raw reply' + (call.finishReason ? ' · finish ' + call.finishReason : '') }), h('pre', { className: 'call-text mono', text: call.reply, data: { testid: 'call-reply' } }));
  if (call.error) body.push(h('div', { className: 'callout error' }, [h('b', { text: call.error.code + ': ' }), call.error.message]));
  // Sampling and the reply schema: the same for most calls of a run, so folded.
  body.push(h('details', { className: 'call-settings' }, [h('summary', { className: 'call-part', text: 'Request settings (sampling, reply schema)' }), h('pre', { className: 'call-text mono', text: call.settings, data: { testid: 'call-settings' } })]));
  return h('details', { className: 'judge-call', data: { testid: 'judge-call', latency: call.latencyMs === null ? '' : call.latencyMs } }, [
    h('summary', { text: summaryParts.join(' · ') }),
    h('div', { className: 'call-body' }, body)
  ]);
}
