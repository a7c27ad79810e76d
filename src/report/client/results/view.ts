/**
 * The results view: the banner when items failed, overview, the agreement with human labels
 * (when the report has them), charts, the table of every criterion, the comparison with a
 * baseline run, and the item explorer with its review bar and drawer, each drawn by its own
 * module. Every string from the results is inserted as text.
 */
import { h } from '../common.js';
import { pageFooter, pageFrame } from '../frame.js';
import { loadTextsInBackground, type TextStore } from '../text-store.js';
import type { ResultsReportPayload, RunTexts } from '../../types.js';
import { chartsSection } from './charts.js';
import { labelLookup, resultsContext } from './common.js';
import { comparisonSection } from './comparison.js';
import { createCriteriaTable, createCriterionDrawer, criterionGroups } from './criteria.js';
import { createItemDrawer } from './drawer.js';
import { createItemExplorer } from './explorer.js';
import { labelsSection } from './labels.js';
import { blindOverviewSection, blindPlaceholder, failureBanner, overviewSection, resultsProblems } from './overview.js';
import { createReviewStore, reviewToolbar } from './review.js';

export function renderResultsView(root: HTMLElement, payload: ResultsReportPayload, textStore: TextStore<RunTexts>): void {
  const context = resultsContext(payload);
  const summary = context.summary, baseline = context.baseline, comparison = context.comparison;
  const overlay = payload.labels || null;
  const labels = overlay ? labelLookup(context.run, overlay) : null;
  const reviews = createReviewStore(context.run.digest);

  const sections = [{ id: 'overview', label: 'Overview' }];
  if (overlay) sections.push({ id: 'labels', label: 'Labels' });
  sections.push({ id: 'charts', label: 'Charts' }, { id: 'criteria', label: 'Criteria' });
  if (comparison) sections.push({ id: 'comparison', label: 'Comparison' });
  sections.push({ id: 'items', label: 'Items' });
  const subtitle = [h('span', { className: 'mono', text: summary.label })];
  if (baseline) subtitle.push(h('span', { className: 'muted', text: 'compared with' }), h('span', { className: 'mono', text: baseline.summary.label }));
  subtitle.push(h('span', { className: 'pill accent', text: summary.scoring }));
  const page = pageFrame(root, payload, { sections: sections, subtitle: subtitle, madeUpBy: summary.madeUpBy || (baseline && baseline.summary.madeUpBy) || null });

  // The charts, the criteria table and the comparison act on the explorer and the drawers, made below: by the time they are clicked all exist.
  const banner = failureBanner(context);
  if (banner) page.appendChild(banner);
  // Blind review hides every figure made of verdicts (the score, the labels' agreement, the
  // charts, the comparison): those sections are drawn as placeholders while it is on, and drawn
  // again when it changes, so no unreviewed figure is ever in the page.
  const blindSections: Array<{ holder: HTMLElement; draw: () => HTMLElement }> = [];
  function blindAware(draw: () => HTMLElement, id: string, title: string): HTMLElement {
    const holder = h('div', { className: 'blind-holder' });
    blindSections.push({ holder: holder, draw: function () { return reviews.blind ? (id === 'overview' ? blindOverviewSection(context) : blindPlaceholder(id, title)) : draw(); } });
    return holder;
  }
  function drawBlindSections(): void {
    blindSections.forEach(function (section) { section.holder.textContent = ''; section.holder.appendChild(section.draw()); });
  }
  page.appendChild(blindAware(function () { return overviewSection(context); }, 'overview', 'Overview'));
  const problems = resultsProblems(context);
  if (problems) page.appendChild(problems);
  if (overlay) page.appendChild(blindAware(function () { return labelsSection(overlay, context.run, function () { explorer.filterByReview('labels'); }); }, 'labels', 'Labels'));
  page.appendChild(blindAware(function () { return chartsSection(context, function (text) { explorer.filterByCriterion(text); }); }, 'charts', 'Where the points went'));
  const groups = criterionGroups(context.run);
  const criteriaTable = createCriteriaTable(context.run, groups, reviews);
  page.appendChild(criteriaTable.element);
  if (comparison) page.appendChild(blindAware(function () { return comparisonSection(comparison, function (index) { drawer.open(index); }, function (text) { explorer.filterByCriterion(text, true); }); }, 'comparison', 'Comparison'));
  const explorer = createItemExplorer(context, function () { return textStore.complete(); }, reviews, labels);
  explorer.element.insertBefore(reviewToolbar(reviews, context.run, function () { drawer.refresh(); explorer.redraw(); }), explorer.element.children[1] || null);
  page.appendChild(explorer.element);
  page.appendChild(pageFooter(payload, [
    'scoring ' + summary.scoring,
    'intervals: seeded percentile bootstrap over items, as rubricate score computes them' + (comparison ? '; paired: ' + comparison.bootstrap.samples + ' resamples, seed ' + comparison.bootstrap.seed : ''),
    'data: ' + summary.label + (baseline ? ' vs ' + baseline.summary.label : '') + (overlay ? ' · labels ' + overlay.label : '')
  ]));
  criteriaTable.mount();
  explorer.mount();
  const drawer = createItemDrawer(context, textStore, explorer, reviews, labels);
  explorer.onOpen = drawer.open;
  const criterionDrawer = createCriterionDrawer(context.run, groups, criteriaTable, textStore, reviews, function (index) { drawer.open(index); });
  criteriaTable.onOpen = criterionDrawer.open;
  drawBlindSections();
  let blindShown = reviews.blind;
  reviews.onChange(function () {
    if (reviews.blind !== blindShown) {
      blindShown = reviews.blind;
      drawBlindSections();
      criteriaTable.refresh(false);
    }
    explorer.redraw();
  });
  loadTextsInBackground(textStore, function (runIndex, chunk) { if (runIndex === 0) explorer.addChunk(chunk); });
}
