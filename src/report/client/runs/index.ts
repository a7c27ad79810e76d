/**
 * The viewer's index (`rubricate view`): every run of the folder with its headline metrics,
 * provenance and cost, in the shared sortable table; tick two or more to compare them, click
 * one to open its report. Other reports of the folder (compare files, meta-evaluations, probes)
 * are listed below with a link each.
 */
import { card, formatCompact, formatCost, formatInteger, formatInterval, formatScore, h, plural, sectionHead } from '../common.js';
import { createExplorer, type ExplorerColumn } from '../explorer.js';
import { pageFooter, pageFrame } from '../frame.js';
import { madeUpNotice } from '../../../util/made-up.js';
import type { RunIndexEntry, RunsIndexPayload } from '../../types.js';

/** The viewer's address of one file's own report (and of an item in it). */
export function runHref(file: string, itemId?: string): string {
  return '/run?file=' + encodeURIComponent(file) + (itemId === undefined ? '' : '#item=' + encodeURIComponent(itemId));
}

export function compareHref(files: readonly string[]): string {
  return '/compare?' + files.map(function (file) { return 'run=' + encodeURIComponent(file); }).join('&');
}

/** What the run list says of a run whose verdicts are made up, in place of a model name and a cost. */
const scriptedText = 'scripted (made up)';

function madeUp(entry: RunIndexEntry): boolean {
  return Boolean(entry.summary && entry.summary.madeUpBy);
}

function judgeOf(entry: RunIndexEntry): string {
  // A fake-judge run's provenance names the model its caller asked for: never shown as if that model judged.
  if (madeUp(entry)) return scriptedText;
  const judges = entry.summary ? entry.summary.judges : [];
  return judges.length === 0 ? 'none' : judges.length === 1 ? judges[0].model : judges.length + ' judges';
}

/** The run history's word on a run: live while its results are being written, else how it ended; made-up verdicts said. */
function historyColumn(runs: RunIndexEntry[]): ExplorerColumn {
  return {
    key: 'history', label: 'Status', width: '150px',
    sortText: function (index) { const history = runs[index].history; return history ? (history.live ? '0 live' : history.status) : ''; },
    cell: function (index) {
      const history = runs[index].history;
      if (!history) return h('div', { className: 'faint', text: '—' });
      const text = (history.live ? '● live' : history.status + (history.processGone ? ' (process gone)' : '')) + (history.madeUp ? ' · made-up verdicts' : '');
      const title = history.command + (history.benchmark ? ' --benchmark ' + history.benchmark : '') + ' · started ' + history.started + (history.ended ? ' · ended ' + history.ended : '') + (history.models ? ' · model ' + history.models.join(', ') : '') + ' · ' + (history.judges.join(', ') || 'no judge');
      return h('div', null, [h('span', { className: 'pill' + (history.live ? ' accent' : ''), text: text, title: title, data: { testid: 'run-status' } })]);
    }
  };
}

/** The runs ticked for comparison, in the order ticked (the first is the reference), and what shows the choice. */
interface RunSelection {
  files: string[];
  compareButton: HTMLButtonElement;
  note: HTMLElement;
}

export function renderRunsIndexView(root: HTMLElement, payload: RunsIndexPayload): void {
  const runs = payload.runs.filter(function (entry) { return entry.kind === 'results' && entry.summary; });
  const others = payload.runs.filter(function (entry) { return entry.kind !== 'results'; });
  const page = pageFrame(root, payload, {
    sections: [{ id: 'runs', label: 'Runs' }, { id: 'other', label: 'Other reports' }],
    subtitle: [h('span', { className: 'pill accent', text: 'viewer' }), h('span', { className: 'mono', text: payload.folder }), h('span', { className: 'muted', text: plural(runs.length, 'run') })]
  });
  const files: string[] = [];
  const selection: RunSelection = {
    files: files,
    compareButton: h('button', { className: 'button', text: 'Compare selected', attrs: { type: 'button' }, data: { testid: 'compare-selected' }, on: { click: function () { if (files.length >= 2) location.href = compareHref(files); } } }),
    note: h('span', { className: 'num muted', data: { testid: 'selection' } })
  };
  const columns = runColumns(runs, selection);
  if (runs.some(function (entry) { return entry.history !== undefined; })) columns.splice(2, 0, historyColumn(runs));
  const explorer = createExplorer({
    section: { id: 'runs', title: 'Runs', hint: 'click a run to open its report · tick runs to compare them on the same items' },
    noun: 'run',
    nounPlural: 'runs',
    rows: runs.length,
    columns: columns,
    rowData: function (index) { return { index: index, file: runs[index].file }; },
    highestFirst: true,
    search: { placeholder: 'Search runs, judges, scorings', keys: function (index) { return runs[index].file + ' ' + judgeOf(runs[index]) + ' ' + runs[index].summary!.scoring + ' ' + runs[index].summary!.judges.map(function (judge) { return judge.id + ' ' + judge.template_version; }).join(' '); } },
    controls: [selection.compareButton, selection.note],
    textsComplete: function () { return true; },
    export: {
      name: 'runs',
      columns: function () { return ['file', 'modified', 'scoring', 'score', 'ci95_low', 'ci95_high', 'n', 'n_ok', 'n_error', 'n_invalid', 'n_unscorable', 'judge', 'model', 'template', 'mode', 'rubricate', 'calls', 'cache_hits', 'input_tokens', 'output_tokens', 'cost_usd', 'scripted']; },
      row: function (index) { return runExportRow(runs[index]); }
    }
  });
  page.appendChild(explorer.element);
  explorer.mount();
  explorer.onOpen = function (index) { location.href = runHref(runs[index].file); };
  updateSelection(selection);
  page.appendChild(otherReportsSection(payload, others));
  page.appendChild(pageFooter(payload, ['rubricate view · loopback only · pages are computed from the files when opened']));
}

function updateSelection(selection: RunSelection): void {
  const count = selection.files.length;
  selection.compareButton.disabled = count < 2;
  selection.note.textContent = count === 0 ? 'tick two runs or more to compare them' : plural(count, 'run') + ' selected' + (count > 1 ? ' (the first ticked is the reference)' : '');
}

/** The tick box, run, time written, score, items, failures, judge, scoring and cost. */
function runColumns(runs: RunIndexEntry[], selection: RunSelection): ExplorerColumn[] {
  const selected = selection.files;
  const metricsOf = function (index: number) { return runs[index].summary!.metrics; };
  return [{
    key: 'pick', label: '', width: '28px',
    cell: function (index) {
      const box = h('input', { attrs: { type: 'checkbox', 'aria-label': 'select ' + runs[index].file }, data: { testid: 'pick' } });
      box.checked = selected.indexOf(runs[index].file) >= 0;
      box.addEventListener('click', function (event) { event.stopPropagation(); });
      box.addEventListener('change', function () {
        const at = selected.indexOf(runs[index].file);
        if (box.checked && at < 0) selected.push(runs[index].file);
        if (!box.checked && at >= 0) selected.splice(at, 1);
        updateSelection(selection);
      });
      return h('div', null, [box]);
    }
  }, {
    key: 'file', label: 'Run', width: 'minmax(180px, 3fr)',
    sortText: function (index) { return runs[index].file; },
    cell: function (index) { return h('div', { className: 'mono', text: runs[index].file, title: runs[index].file }); }
  }, {
    key: 'modified', label: 'Written', width: '150px',
    sortText: function (index) { return runs[index].modified; },
    cell: function (index) { const date = new Date(runs[index].modified); return h('div', { className: 'num muted', text: isNaN(date.getTime()) ? runs[index].modified : date.toLocaleString(), title: runs[index].modified }); }
  }, {
    key: 'score', label: 'Score', width: '160px', right: true,
    sortNumber: function (index) { const overall = metricsOf(index).overall; return overall ? overall.score : null; },
    cell: function (index) {
      const overall = metricsOf(index).overall;
      return h('div', { className: 'right num', title: overall ? '95% CI ' + formatInterval(overall.ci95) : 'no item scored' }, [h('b', { text: formatScore(overall ? overall.score : null) }), h('span', { className: 'faint', text: overall ? '  ' + formatInterval(overall.ci95, 2) : '' })]);
    }
  }, {
    key: 'items', label: 'Items', width: '70px', right: true,
    sortNumber: function (index) { return metricsOf(index).n; },
    cell: function (index) { return h('div', { className: 'right num', text: formatInteger(metricsOf(index).n) }); }
  }, {
    key: 'failed', label: 'Error / invalid', width: '110px', right: true,
    sortNumber: function (index) { return metricsOf(index).n_error + metricsOf(index).n_invalid; },
    cell: function (index) { const metrics = metricsOf(index); const failed = metrics.n_error + metrics.n_invalid; return h('div', { className: 'right num' + (failed ? ' down' : ' faint'), text: formatInteger(metrics.n_error) + ' / ' + formatInteger(metrics.n_invalid) }); }
  }, {
    key: 'judge', label: 'Judge', width: 'minmax(120px, 2fr)',
    sortText: function (index) { return judgeOf(runs[index]); },
    cell: function (index) {
      const entry = runs[index];
      if (madeUp(entry)) return h('div', null, [h('span', { className: 'chip made-up', text: scriptedText, title: madeUpNotice(entry.summary!.madeUpBy!), data: { testid: 'made-up' } })]);
      return h('div', { className: 'mono', text: judgeOf(entry), title: entry.summary!.judges.map(function (judge) { return judge.id + ' · ' + judge.template_version + ' · ' + judge.mode; }).join('\n') });
    }
  }, {
    key: 'scoring', label: 'Scoring', width: '110px', narrowHidden: true,
    sortText: function (index) { return runs[index].summary!.scoring; },
    cell: function (index) { return h('div', { className: 'hide-narrow', text: runs[index].summary!.scoring }); }
  }, {
    key: 'cost', label: 'Cost', width: '80px', right: true,
    sortNumber: function (index) { return madeUp(runs[index]) ? null : runs[index].summary!.costUsd; },
    cell: function (index) {
      if (madeUp(runs[index])) return h('div', { className: 'right faint', text: 'scripted', title: 'no model was asked: no cost' });
      return h('div', { className: 'right num', text: formatCost(runs[index].summary!.costUsd), title: formatInteger(runs[index].summary!.usage.calls) + ' calls · ' + formatCompact(runs[index].summary!.usage.prompt_tokens) + ' input tokens' });
    }
  }];
}

/** One run as the CSV and JSON export write it. */
function runExportRow(entry: RunIndexEntry): Record<string, unknown> {
  const summary = entry.summary!, metrics = summary.metrics, overall = metrics.overall, scripted = madeUp(entry), judge = summary.judges.length === 1 && !scripted ? summary.judges[0] : null;
  return {
    file: entry.file, modified: entry.modified, scoring: summary.scoring, score: overall ? overall.score : null, ci95_low: overall ? overall.ci95[0] : null, ci95_high: overall ? overall.ci95[1] : null,
    n: metrics.n, n_ok: metrics.n_ok, n_error: metrics.n_error, n_invalid: metrics.n_invalid, n_unscorable: metrics.n_unscorable,
    judge: judge ? judge.id : judgeOf(entry), model: judge ? judge.model : null, template: judge ? judge.template_version : null, mode: judge ? judge.mode : null, rubricate: summary.versions.join(' '),
    calls: summary.usage.calls, cache_hits: summary.usage.cache_hits, input_tokens: summary.usage.prompt_tokens, output_tokens: summary.usage.completion_tokens, cost_usd: scripted ? null : summary.costUsd, scripted: scripted
  };
}

/** The folder's other reports (compare files, meta-evaluations, probes) with a link each, and the files that could not be read. */
function otherReportsSection(payload: RunsIndexPayload, others: RunIndexEntry[]): HTMLElement {
  const other = h('section', { className: 'section', attrs: { id: 'other' } }, [sectionHead('Other reports', 'compare files, meta-evaluations and probe reports of the folder')]);
  other.appendChild(card(null, [others.length === 0 ? h('div', { className: 'callout info', text: 'None in this folder.' }) : h('table', { className: 'data', data: { testid: 'other-reports' } }, [
    h('thead', null, [h('tr', null, [h('th', { text: 'file' }), h('th', { text: 'kind' }), h('th', { className: 'num', text: 'size' })])]),
    h('tbody', null, others.map(function (entry) {
      return h('tr', null, [h('td', null, [h('a', { className: 'run-link mono', text: entry.file, attrs: { href: runHref(entry.file) } })]), h('td', { text: entry.kind }), h('td', { className: 'num', text: formatCompact(entry.bytes) + ' B' })]);
    }))
  ])]));
  if (payload.skipped.length > 0) {
    other.appendChild(h('div', { className: 'callout error', data: { testid: 'skipped-files' } }, [h('details', null, [h('summary', { text: plural(payload.skipped.length, 'file') + ' could not be read as runs' }), h('ul', null, payload.skipped.map(function (entry) { return h('li', null, [h('span', { className: 'mono', text: entry.file + ': ' }), entry.reason]); }))])]));
  }
  return other;
}
