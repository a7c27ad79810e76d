/**
 * The pairwise compare view (`rubricate compare` results): overview, gold-label agreement,
 * per-criterion and per-source breakdowns, and the pair explorer with its drawer, each drawn
 * by its own module. Every string from the data is inserted as text.
 */
import { formatInteger, h, plural } from '../common.js';
import { pageFooter, pageFrame } from '../frame.js';
import { loadTextsInBackground, type TextStore } from '../text-store.js';
import type { CompareReportPayload, PairTexts } from '../../types.js';
import { agreementSection, criteriaSection, sourcesSection } from './charts.js';
import { createPairDrawer } from './drawer.js';
import { createPairExplorer } from './explorer.js';
import { compareProblems, overviewSection } from './overview.js';

export function renderPairwiseCompareView(root: HTMLElement, payload: CompareReportPayload, textStore: TextStore<PairTexts>): void {
  const summary = payload.summary;
  const figures = summary.figures;
  const agreement = figures.agreement || null;
  const hasSources = summary.sources.length > 0;

  const sections = [{ id: 'overview', label: 'Overview' }];
  if (agreement) sections.push({ id: 'agreement', label: 'Gold labels' });
  if (summary.criteria.length) sections.push({ id: 'criteria', label: 'Criteria' });
  if (hasSources) sections.push({ id: 'sources', label: 'Sources' });
  sections.push({ id: 'pairs', label: 'Pairs' });
  const page = pageFrame(root, payload, {
    sections: sections,
    subtitle: [
      h('span', { className: 'pill accent', text: 'pairwise compare' }),
      h('span', { className: 'mono', text: summary.label }),
      h('span', { className: 'num muted', text: plural(figures.n, 'pair') + ' · ' + (summary.swappedPairs > 0 ? formatInteger(summary.swappedPairs) + ' judged in both orders' : 'original order only') })
    ],
    madeUpBy: summary.madeUpBy || null
  });

  page.appendChild(overviewSection(payload));
  const problems = compareProblems(payload);
  if (problems) page.appendChild(problems);
  if (agreement) page.appendChild(agreementSection(payload, agreement));
  if (summary.criteria.length) page.appendChild(criteriaSection(payload));
  // The sources table filters the explorer, made below: by the time a source is clicked it exists.
  if (hasSources) page.appendChild(sourcesSection(payload, function (source) { explorer.filterBySource(source); }));
  const explorer = createPairExplorer(payload, function () { return textStore.complete(); });
  page.appendChild(explorer.element);
  page.appendChild(pageFooter(payload, [
    'win rate: A better = 1, tie and order-inconsistent = ½, B better = 0, over pairs with a verdict',
    'intervals: seeded percentile bootstrap over pairs, 1000 resamples, as rubricate compare computes them',
    'data: ' + summary.label
  ]));
  explorer.mount();
  const drawer = createPairDrawer(payload, textStore, explorer);
  explorer.onOpen = drawer.open;
  loadTextsInBackground(textStore, function (_runIndex, chunk) { if (chunk) explorer.addChunk(chunk); });
}
