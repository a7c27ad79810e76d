/**
 * The report page's entry: reads the embedded payload, picks the view it names and hands it
 * a store that decodes the long texts on demand. esbuild bundles this module and its imports
 * into the one script of the self-contained HTML file.
 */
import type { CompareReportPayload, MetaReportPayload, PairTexts, ProbeReportPayload, ReportPayload, ResultsReportPayload, RunsComparePayload, RunsIndexPayload, RunTexts } from '../types.js';
import { errorMessage, showFatal } from './common.js';
import { renderBinaryMetaView, renderPairwiseMetaView } from './meta.js';
import { renderPairwiseCompareView } from './pairwise/view.js';
import { renderProbeView } from './probes.js';
import { renderRunsCompareView } from './runs/compare.js';
import { renderRunsIndexView } from './runs/index.js';
import { renderResultsView } from './results/view.js';
import { createTextStore, readScript } from './text-store.js';

/**
 * Draws the view a payload names. A new view adds its case here and its payload type to
 * `ReportPayload`.
 */
function renderView(root: HTMLElement, payload: ReportPayload): void {
  switch (payload.view) {
    case 'results':
      renderResultsView(root, payload as ResultsReportPayload, createTextStore<RunTexts>(payload.runs));
      return;
    case 'meta-binary':
      renderBinaryMetaView(root, payload as MetaReportPayload);
      return;
    case 'meta-pairwise':
      renderPairwiseMetaView(root, payload as MetaReportPayload);
      return;
    case 'compare': {
      const compare = payload as CompareReportPayload;
      renderPairwiseCompareView(root, compare, createTextStore<PairTexts>([{ items: { ids: compare.pairs.ids }, textChunkSize: compare.textChunkSize }]));
      return;
    }
    case 'probes':
      renderProbeView(root, payload as ProbeReportPayload);
      return;
    case 'runs':
      renderRunsIndexView(root, payload as RunsIndexPayload);
      return;
    case 'runs-compare':
      renderRunsCompareView(root, payload as RunsComparePayload);
      return;
    default:
      throw new Error('This copy of rubricate cannot show a "' + (payload as { view: string }).view + '" report.');
  }
}

function boot(): void {
  const root = document.getElementById('app')!;
  readScript('rubricate-payload').then(function (payload) {
    const view = (payload as ReportPayload).view;
    if (!['results', 'meta-binary', 'meta-pairwise', 'compare', 'probes', 'runs', 'runs-compare'].includes(view)) throw new Error('This copy of rubricate cannot show a "' + view + '" report.');
    root.textContent = '';
    renderView(root, payload as ReportPayload);
    document.documentElement.setAttribute('data-report-ready', '1');
    if (performance.mark) performance.mark('rubricate-ready');
  }).catch(function (error: unknown) {
    showFatal(root, error);
    document.documentElement.setAttribute('data-report-error', errorMessage(error));
  });
}

boot();
