/**
 * The results view: overview, charts, the comparison with a baseline run, and the item
 * explorer with its drawer, each drawn by its own module. Every string from the results is
 * inserted as text.
 */
import { h } from '../common.js';
import { pageFooter, pageFrame } from '../frame.js';
import { loadTextsInBackground, type TextStore } from '../text-store.js';
import type { ResultsReportPayload, RunTexts } from '../../types.js';
import { chartsSection } from './charts.js';
import { resultsContext } from './common.js';
import { comparisonSection } from './comparison.js';
import { createItemDrawer } from './drawer.js';
import { createItemExplorer } from './explorer.js';
import { overviewSection, resultsProblems } from './overview.js';

export function renderResultsView(root: HTMLElement, payload: ResultsReportPayload, textStore: TextStore<RunTexts>): void {
  const context = resultsContext(payload);
  const summary = context.summary, baseline = context.baseline, comparison = context.comparison;

  const sections = [{ id: 'overview', label: 'Overview' }, { id: 'charts', label: 'Charts' }];
  if (comparison) sections.push({ id: 'comparison', label: 'Comparison' });
  sections.push({ id: 'items', label: 'Items' });
  const subtitle = [h('span', { className: 'mono', text: summary.label })];
  if (baseline) subtitle.push(h('span', { className: 'muted', text: 'compared with' }), h('span', { className: 'mono', text: baseline.summary.label }));
  subtitle.push(h('span', { className: 'pill accent', text: summary.scoring }));
  const page = pageFrame(root, payload, { sections: sections, subtitle: subtitle });

  // The charts and the comparison act on the explorer and the drawer, made below: by the time they are clicked both exist.
  page.appendChild(overviewSection(context));
  const problems = resultsProblems(context);
  if (problems) page.appendChild(problems);
  page.appendChild(chartsSection(context, function (text) { explorer.filterByCriterion(text); }));
  if (comparison) page.appendChild(comparisonSection(comparison, function (index) { drawer.open(index); }, function (text) { explorer.filterByCriterion(text, true); }));
  const explorer = createItemExplorer(context, function () { return textStore.complete(); });
  page.appendChild(explorer.element);
  page.appendChild(pageFooter(payload, [
    'scoring ' + summary.scoring,
    'intervals: seeded percentile bootstrap over items, as rubricate score computes them' + (comparison ? '; paired: ' + comparison.bootstrap.samples + ' resamples, seed ' + comparison.bootstrap.seed : ''),
    'data: ' + summary.label + (baseline ? ' vs ' + baseline.summary.label : '')
  ]));
  explorer.mount();
  const drawer = createItemDrawer(context, textStore, explorer);
  explorer.onOpen = drawer.open;
  loadTextsInBackground(textStore, function (runIndex, chunk) { if (runIndex === 0) explorer.addChunk(chunk); });
}
