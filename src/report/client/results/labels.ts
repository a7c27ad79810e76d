/**
 * The agreement of the run's judge with the human labels laid over it (`rubricate report
 * --labels`): the figures `rubricate meta --format results --labels` computes (balanced F1,
 * accuracy, κ with intervals, the confusion matrix, per criterion and per tag), how the labels
 * joined the verdicts, and a way to list the items where the labels disagree.
 */
import { card, formatInteger, h, invalidLinesNote, plural, sectionHead, statList } from '../common.js';
import { binaryGroupSection, confusionCard, metricCard } from '../meta.js';
import type { LabelsOverlay, RunData } from '../../types.js';

export function labelsSection(overlay: LabelsOverlay, run: RunData, listDisagreements: () => void): HTMLElement {
  const section = h('section', { className: 'section', attrs: { id: 'labels' }, data: { testid: 'labels-section' } }, [sectionHead('Agreement with ' + overlay.label, 'judge verdicts against the human labels, as rubricate meta --format results --labels computes them')]);
  if (overlay.invalidLineCount > 0) section.appendChild(h('div', { className: 'callout error' }, [invalidLinesNote(plural(overlay.invalidLineCount, 'line') + ' of ' + overlay.label + ' could not be read and were skipped', overlay.invalidLines)]));
  const agreement = overlay.agreement;
  if (!agreement) {
    section.appendChild(card(null, [h('div', { className: 'callout info', text: overlay.problem || 'No labelled verdict.' })]));
    return section;
  }
  const overall = agreement.overall;
  section.appendChild(h('div', { className: 'grid-3', style: { 'grid-template-columns': 'repeat(auto-fit, minmax(200px, 1fr))' } }, [
    metricCard('Balanced F1', overall.balancedF1, overall.intervals.balancedF1, 'undefined: a class is missing', 'labels-balanced-f1'),
    metricCard('Accuracy', overall.accuracy, overall.intervals.accuracy, null, 'labels-accuracy'),
    metricCard("Cohen's κ", overall.cohenKappa, overall.intervals.cohenKappa, null, 'labels-kappa')
  ]));
  const join = overlay.join;
  const grid = h('div', { className: 'grid-2', style: { 'margin-top': '16px' } });
  grid.appendChild(confusionCard(overall.confusion));
  grid.appendChild(card('How the labels joined', [
    join ? statList([
      ['Labelled verdicts compared', formatInteger(join.joined)],
      ['Judge–label pairs', formatInteger(overall.pairs)],
      ['Labelled, but no verdict', formatInteger(join.labelledWithoutVerdict)],
      ['Labelled checks (left out)', formatInteger(join.labelledChecks)],
      ['Labels for items not in the run', formatInteger(join.labelsForMissingItems)],
      ['Labels for unknown criteria', formatInteger(join.labelsForMissingCriteria)],
      ['Verdicts nobody labelled', formatInteger(join.verdictsWithoutLabel)]
    ]) : null,
    join && join.unmatchedExamples.length ? h('div', { className: 'chart-note', text: 'unmatched: ' + join.unmatchedExamples.join(', ') }) : null,
    h('div', { style: { 'margin-top': '12px' } }, [h('button', { className: 'button', text: 'List the items where the labels disagree', attrs: { type: 'button' }, data: { testid: 'list-disagreements' }, on: { click: listDisagreements } })])
  ]));
  section.appendChild(grid);
  // Criterion groups are named by id in the join; the table shows the criterion's text.
  const textById = new Map<string, string>();
  run.criteria.ids.forEach(function (id, position) { const name = run.strings[id]; if (!textById.has(name)) textById.set(name, run.strings[run.criteria.texts[position]]); });
  const groups = binaryGroupSection(agreement, 'agreement per criterion and per tag, with 95% bootstrap intervals', function (key, value) { return key === 'criterion' ? textById.get(value) || value : value; });
  groups.removeAttribute('id');
  section.appendChild(groups);
  return section;
}
