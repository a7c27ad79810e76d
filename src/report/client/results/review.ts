/**
 * Reviewing verdicts in the page: a person marks any criterion of any item met, not met or
 * cannot assess, with a note. Reviews stay in the browser (localStorage, under the digest of the
 * run's verdicts, so a report written again from the same results finds them), and export as a
 * labels file that `rubricate meta --format results --labels` and `rubricate report --labels`
 * read: one line per review, `{id, criterion_id, label, reviewer, time, note}`. In blind mode the
 * judge's verdict and explanation stay hidden until the reviewer has answered (and the page draws
 * no figure made of unreviewed verdicts: view.ts, explorer.ts, criteria.ts). Reviews are saved as
 * they are made: `rubricate view` writes them beside the run, a report file offers the download.
 */
import { rubricateCriterionMet } from '../decode.js';
import { formatInteger, h, plural } from '../common.js';
import { downloadText } from '../export.js';
import type { RunData } from '../../types.js';

export type ReviewAnswer = 'met' | 'not_met' | 'cannot_assess';

export interface Review {
  answer: ReviewAnswer;
  note: string;
  /** When it was last changed, ISO 8601. */
  time: string;
  reviewer: string;
}

export interface ReviewStore {
  get(itemId: string, criterionId: string): Review | undefined;
  /** Records an answer (keeping the note), or removes the review with null. */
  answer(itemId: string, criterionId: string, answer: ReviewAnswer | null): void;
  note(itemId: string, criterionId: string, note: string): void;
  entries(): Array<{ itemId: string; criterionId: string; review: Review }>;
  readonly size: number;
  reviewer: string;
  blind: boolean;
  /** False when the browser keeps nothing (storage off): reviews last as long as the page. */
  readonly persistent: boolean;
  onChange(listener: () => void): void;
}

const settingsKey = 'rubricate.review-settings.v1';
const autoDownloadKey = 'rubricate.labels-download.v1';

/** Reads and writes storage, or nothing when the browser refuses it. */
function storage(): Storage | null {
  try {
    const store = window.localStorage;
    const probe = 'rubricate.probe';
    store.setItem(probe, '1');
    store.removeItem(probe);
    return store;
  } catch {
    return null;
  }
}

function readJson(store: Storage | null, key: string): Record<string, unknown> | null {
  if (!store) return null;
  try {
    const value: unknown = JSON.parse(store.getItem(key) || 'null');
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const answers: readonly ReviewAnswer[] = ['met', 'not_met', 'cannot_assess'];

function isReview(value: unknown): value is Review {
  const review = value as Review;
  return value !== null && typeof value === 'object' && answers.indexOf(review.answer) >= 0 && typeof review.note === 'string' && typeof review.time === 'string' && typeof review.reviewer === 'string';
}

/** The reviews of the run whose verdicts have this digest. */
export function createReviewStore(digest: string): ReviewStore {
  const saved = storage();
  const key = 'rubricate.reviews.v1.' + digest;
  const reviews = new Map<string, Review>();
  const stored = readJson(saved, key);
  if (stored && stored.reviews && typeof stored.reviews === 'object') {
    const entries = stored.reviews as Record<string, unknown>;
    for (const name in entries) if (isReview(entries[name])) reviews.set(name, entries[name] as Review);
  }
  const settings = readJson(saved, settingsKey) || {};
  let reviewer = typeof settings.reviewer === 'string' ? settings.reviewer : '';
  let blind = settings.blind === true;
  const listeners: Array<() => void> = [];

  function pairKey(itemId: string, criterionId: string): string { return itemId + '\u0000' + criterionId; }
  function save(): void {
    if (saved) {
      try {
        const out: Record<string, Review> = {};
        reviews.forEach(function (review, name) { out[name] = review; });
        saved.setItem(key, JSON.stringify({ reviews: out }));
        saved.setItem(settingsKey, JSON.stringify({ reviewer: reviewer, blind: blind }));
      } catch {
        // Storage full: the reviews stay in the page; the export still has them.
      }
    }
    listeners.forEach(function (listener) { listener(); });
  }

  return {
    get: function (itemId, criterionId) { return reviews.get(pairKey(itemId, criterionId)); },
    answer: function (itemId, criterionId, answer) {
      const name = pairKey(itemId, criterionId);
      if (answer === null) reviews.delete(name);
      else reviews.set(name, { answer: answer, note: reviews.get(name)?.note || '', time: new Date().toISOString(), reviewer: reviewer });
      save();
    },
    note: function (itemId, criterionId, note) {
      const review = reviews.get(pairKey(itemId, criterionId));
      if (!review || review.note === note) return;
      reviews.set(pairKey(itemId, criterionId), { answer: review.answer, note: note, time: new Date().toISOString(), reviewer: review.reviewer || reviewer });
      save();
    },
    entries: function () {
      const list: Array<{ itemId: string; criterionId: string; review: Review }> = [];
      reviews.forEach(function (review, name) { const split = name.indexOf('\u0000'); list.push({ itemId: name.slice(0, split), criterionId: name.slice(split + 1), review: review }); });
      return list;
    },
    get size() { return reviews.size; },
    get reviewer() { return reviewer; },
    set reviewer(name: string) { reviewer = name.trim(); save(); },
    get blind() { return blind; },
    set blind(value: boolean) { blind = value; save(); },
    persistent: saved !== null,
    onChange: function (listener) { listeners.push(listener); }
  };
}

/** The judge's verdict, where there is one, and the review say different things about "met". */
export function disagrees(review: Review | undefined, judgeMet: boolean | null): boolean {
  return Boolean(review) && judgeMet !== null && review!.answer !== 'cannot_assess' && (review!.answer === 'met') !== judgeMet;
}

/** The reviews as label lines: one per review, in the order they were made. */
export function labelLines(store: ReviewStore): Array<Record<string, unknown>> {
  return store.entries().map(function (entry) {
    const review = entry.review;
    const line: Record<string, unknown> = { id: entry.itemId, criterion_id: entry.criterionId, label: review.answer === 'cannot_assess' ? 'cannot_assess' : review.answer === 'met' };
    if (review.reviewer) line.reviewer = review.reviewer;
    line.time = review.time;
    if (review.note) line.note = review.note;
    return line;
  });
}

/** The reviews as a labels file (`rubricate meta --labels`, `report --labels`, `align` read it). */
export function labelsJsonl(store: ReviewStore): string {
  return labelLines(store).map(function (line) { return JSON.stringify(line) + '\n'; }).join('');
}

/** The run file of a `rubricate view` run page (`/run?file=…`), whose reviews the viewer saves beside it; null in a report file. */
function viewerRunFile(): string | null {
  if (location.protocol !== 'http:' || location.pathname !== '/run') return null;
  return new URLSearchParams(location.search).get('file');
}

/**
 * Reviews saved as you go, so a closed browser loses nothing. In `rubricate view` every change
 * is sent to the viewer, which writes the labels file beside the run (one save in flight, the
 * latest reviews sent after it). A report file cannot write: it offers the labels file for
 * download after every change, and with "download on every change" ticked downloads it itself.
 */
function labelsSaving(store: ReviewStore, fileName: string): HTMLElement {
  const status = h('span', { className: 'num faint', data: { testid: 'labels-saved' } });
  const runFile = viewerRunFile();
  if (runFile !== null) {
    let inFlight = false, pending = false;
    const send = function (): void {
      if (inFlight) { pending = true; return; }
      inFlight = true;
      pending = false;
      status.textContent = 'saving…';
      fetch('/labels?file=' + encodeURIComponent(runFile), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ labels: labelLines(store) }) })
        .then(function (response) { return response.json().then(function (body: { file?: string; labels?: number; error?: { message?: string } }) {
          status.textContent = response.ok ? 'saved to ' + body.file + ' (' + plural(body.labels || 0, 'review') + ')' : 'not saved: ' + (body.error && body.error.message || response.status);
          status.setAttribute('data-state', response.ok ? 'saved' : 'failed');
        }); })
        .catch(function (error: unknown) { status.textContent = 'not saved: ' + String(error); status.setAttribute('data-state', 'failed'); })
        .then(function () { inFlight = false; if (pending) send(); });
    };
    let saved = labelsJsonl(store);
    store.onChange(function () { const now = labelsJsonl(store); if (now !== saved) { saved = now; send(); } });
    status.textContent = 'reviews are saved beside the run as you go';
    return status;
  }
  const settings = readJson(storage(), autoDownloadKey) || {};
  const autoBox = h('input', { attrs: { type: 'checkbox' }, data: { testid: 'download-on-change' } });
  autoBox.checked = settings.on === true;
  autoBox.addEventListener('change', function () { try { storage()?.setItem(autoDownloadKey, JSON.stringify({ on: autoBox.checked })); } catch { /* no storage: the box lasts as long as the page */ } });
  const offer = h('a', { className: 'button', text: 'Save labels file', attrs: { download: fileName, href: '#' }, data: { testid: 'save-labels' }, style: { display: 'none' } });
  let url = '';
  let last = labelsJsonl(store);
  offer.addEventListener('click', function () { status.textContent = 'labels file saved from this page'; offer.classList.remove('accent'); });
  store.onChange(function () {
    const text = labelsJsonl(store);
    if (text === last) return;
    last = text;
    if (url) URL.revokeObjectURL(url);
    url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
    offer.setAttribute('href', url);
    offer.style.display = '';
    offer.classList.add('accent');
    status.textContent = 'changed since the last download: save the labels file to keep it outside this browser';
    if (autoBox.checked) { downloadText(fileName, text, 'application/x-ndjson'); status.textContent = 'labels file downloaded'; }
  });
  return h('span', { className: 'labels-saving' }, [offer, h('label', { className: 'toggle', title: 'download the labels file each time a review changes, so a closed browser loses nothing' }, [autoBox, 'download on every change']), status]);
}

/** Per run criterion position: the judge's verdict (null without one); for the counts. */
export interface ReviewIndex {
  /** The judge's met for a reviewed pair, or undefined when the run has no such criterion. */
  judgeMet(itemId: string, criterionId: string): boolean | null | undefined;
}

export function reviewIndex(run: RunData): ReviewIndex {
  let positions: Map<string, number> | null = null;
  return {
    judgeMet: function (itemId, criterionId) {
      if (!positions) {
        positions = new Map();
        const items = run.items;
        for (let item = 0; item < items.ids.length; item += 1) {
          for (let position = items.criteriaOffsets[item]; position < items.criteriaOffsets[item + 1]; position += 1) {
            const name = items.ids[item] + '\u0000' + run.strings[run.criteria.ids[position]];
            if (!positions.has(name)) positions.set(name, position);
          }
        }
      }
      const position = positions.get(itemId + '\u0000' + criterionId);
      if (position === undefined) return undefined;
      const flags = run.criteria.flags[position];
      return (flags & 3) === 0 ? rubricateCriterionMet(flags) : null;
    }
  };
}

/** The review bar above the item table: who reviews, blind mode, how many are done, and the export. */
export function reviewToolbar(store: ReviewStore, run: RunData, onBlindChange: () => void): HTMLElement {
  const index = reviewIndex(run);
  const total = run.criteria.ids.length;
  const counts = h('span', { className: 'num muted', data: { testid: 'review-count' } });
  const nameInput = h('input', { className: 'review-name', attrs: { type: 'text', placeholder: 'your name', 'aria-label': 'reviewer name', value: store.reviewer }, data: { testid: 'reviewer' } });
  nameInput.addEventListener('change', function () { store.reviewer = nameInput.value; });
  const blindBox = h('input', { attrs: { type: 'checkbox' }, data: { testid: 'blind' } });
  blindBox.checked = store.blind;
  blindBox.addEventListener('change', function () { store.blind = blindBox.checked; onBlindChange(); });
  const fileName = 'labels-' + run.summary.label.replace(/\.[^.]+$/, '') + '.jsonl';
  const exportButton = h('button', { className: 'button', text: 'Export labels', attrs: { type: 'button', title: 'your reviews as a labels file for rubricate meta --labels and rubricate report --labels' }, data: { testid: 'export-labels' }, on: { click: function () {
    downloadText(fileName, labelsJsonl(store), 'application/x-ndjson');
  } } });
  function update(): void {
    let disagreeing = 0;
    store.entries().forEach(function (entry) { if (disagrees(entry.review, index.judgeMet(entry.itemId, entry.criterionId) ?? null)) disagreeing += 1; });
    counts.textContent = 'reviewed ' + formatInteger(store.size) + ' of ' + plural(total, 'verdict') + (disagreeing ? ' · you disagree with ' + formatInteger(disagreeing) : '');
    exportButton.disabled = store.size === 0;
    blindBox.checked = store.blind;
  }
  store.onChange(update);
  update();
  return h('div', { className: 'review-bar', data: { testid: 'review-bar' } }, [
    h('span', { className: 'review-title', text: 'Review' }),
    counts,
    h('label', { className: 'toggle' }, ['reviewer', nameInput]),
    h('label', { className: 'toggle', title: "hide the judge's verdict and explanation until you have answered" }, [blindBox, 'blind']),
    exportButton,
    labelsSaving(store, fileName),
    store.persistent ? null : h('span', { className: 'faint', text: 'this browser keeps no storage: reviews last until the page closes (export them)' })
  ]);
}

/** The review control of one criterion in the drawer. */
export function reviewControl(store: ReviewStore, itemId: string, criterionId: string, judgeMet: boolean | null, onChange: () => void): HTMLElement {
  const review = store.get(itemId, criterionId);
  const options: Array<{ answer: ReviewAnswer; label: string }> = [{ answer: 'met', label: 'Met' }, { answer: 'not_met', label: 'Not met' }, { answer: 'cannot_assess', label: 'Cannot assess' }];
  const buttons = h('div', { className: 'tabs review-answers', attrs: { role: 'group', 'aria-label': 'your verdict' } }, options.map(function (option) {
    return h('button', { text: option.label, attrs: { type: 'button', 'aria-pressed': review && review.answer === option.answer ? 'true' : 'false' }, data: { answer: option.answer }, on: { click: function () {
      store.answer(itemId, criterionId, review && review.answer === option.answer ? null : option.answer);
      onChange();
    } } });
  }));
  const parts: Array<Node | null> = [h('span', { className: 'review-label', text: 'You:' }), buttons];
  if (review) {
    const disagreeing = disagrees(review, judgeMet);
    parts.push(h('span', { className: 'chip ' + (disagreeing ? 'review-disagree' : 'review-agree'), text: review.answer === 'cannot_assess' ? 'cannot assess' : judgeMet === null ? 'judge gave no verdict' : disagreeing ? 'you disagree' : 'you agree', data: { testid: 'review-agreement' } }));
    const note = h('input', { className: 'review-note', attrs: { type: 'text', placeholder: 'note (optional)', 'aria-label': 'review note', value: review.note }, data: { testid: 'review-note' } });
    note.addEventListener('change', function () { store.note(itemId, criterionId, note.value); });
    parts.push(note);
  }
  return h('div', { className: 'review', data: { testid: 'review', review: review ? review.answer : '' } }, parts);
}
