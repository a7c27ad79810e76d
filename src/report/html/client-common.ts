/**
 * Page helpers shared by every view: element building (data only ever reaches the page as
 * text nodes or attribute values, never as markup), number formatting, chart defaults and
 * the confidence-interval whisker plugin for Chart.js.
 */
export const clientCommonSource = String.raw`
var COLORS = {
  accent: '#4f46e5', accentSoft: 'rgba(79, 70, 229, 0.78)', baseline: '#94a3b8', baselineSoft: 'rgba(148, 163, 184, 0.8)',
  good: '#10b981', bad: '#ef4444', warn: '#f59e0b', neutral: '#cbd5e1', text: '#111827', muted: '#566074', grid: '#eef1f6'
};

/** Builds an element. props: className, text, title, attrs, data, style, on. Children: nodes or strings (as text). */
function h(tag, props, children) {
  var element = document.createElement(tag);
  if (props) {
    if (props.className) element.className = props.className;
    if (props.text !== undefined && props.text !== null) element.textContent = String(props.text);
    if (props.title) element.title = String(props.title);
    if (props.attrs) for (var name in props.attrs) if (props.attrs[name] !== undefined && props.attrs[name] !== null) element.setAttribute(name, String(props.attrs[name]));
    if (props.data) for (var key in props.data) element.dataset[key] = String(props.data[key]);
    if (props.style) for (var property in props.style) element.style.setProperty(property, props.style[property]);
    if (props.on) for (var event in props.on) element.addEventListener(event, props.on[event]);
  }
  if (children) appendChildren(element, children);
  return element;
}

function appendChildren(element, children) {
  for (var index = 0; index < children.length; index += 1) {
    var child = children[index];
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) appendChildren(element, child);
    else element.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Inline SVG icons are fixed markup written here, never data. */
function icon(name) {
  var paths = {
    search: 'M11 19a8 8 0 1 1 5.3-14A8 8 0 0 1 11 19Zm10 2-4.35-4.35',
    close: 'M6 6l12 12M18 6 6 18',
    up: 'M6 15l6-6 6 6',
    down: 'M6 9l6 6 6-6',
    sort: 'M8 9l4-4 4 4M16 15l-4 4-4-4'
  };
  var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('width', '16'); svg.setAttribute('height', '16'); svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('fill', 'none'); svg.setAttribute('stroke', 'currentColor'); svg.setAttribute('stroke-width', '2');
  svg.setAttribute('stroke-linecap', 'round'); svg.setAttribute('stroke-linejoin', 'round'); svg.setAttribute('aria-hidden', 'true');
  var path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', paths[name]);
  svg.appendChild(path);
  return svg;
}

function isNumber(value) { return typeof value === 'number' && isFinite(value); }
function formatScore(value, digits) {
  if (!isNumber(value)) return '—';
  var text = value.toFixed(digits === undefined ? 3 : digits);
  return text.charAt(0) === '-' ? (Number(text) === 0 ? text.slice(1) : '−' + text.slice(1)) : text;
}
function formatSigned(value, digits) {
  if (!isNumber(value)) return '—';
  var text = Math.abs(value).toFixed(digits === undefined ? 3 : digits);
  if (Number(text) === 0) return text;
  return (value > 0 ? '+' : '−') + text;
}
function formatInteger(value) { return isNumber(value) ? Math.round(value).toLocaleString('en-US') : '—'; }
function formatPercent(value, digits) { return isNumber(value) ? (value * 100).toFixed(digits === undefined ? 1 : digits) + '%' : '—'; }
function formatCompact(value) {
  if (!isNumber(value)) return '—';
  var absolute = Math.abs(value);
  if (absolute >= 1e9) return (value / 1e9).toFixed(2) + 'B';
  if (absolute >= 1e6) return (value / 1e6).toFixed(2) + 'M';
  if (absolute >= 1e4) return (value / 1e3).toFixed(1) + 'k';
  return formatInteger(value);
}
function formatInterval(interval, digits) {
  if (!interval || !isNumber(interval[0]) || !isNumber(interval[1])) return '—';
  return formatScore(interval[0], digits) + ' – ' + formatScore(interval[1], digits);
}
function formatSignedInterval(interval, digits) {
  if (!interval || !isNumber(interval[0]) || !isNumber(interval[1])) return '—';
  return formatSigned(interval[0], digits) + ' … ' + formatSigned(interval[1], digits);
}
function formatPoints(points) {
  var text = Number.isInteger(points) ? String(Math.abs(points)) : Math.abs(points).toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
  return (points < 0 ? '−' : '+') + text;
}
function formatCost(value) { return isNumber(value) ? '$' + (value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(2) : value.toFixed(4)) : 'unknown'; }
function truncate(text, length) { return text.length > length ? text.slice(0, length - 1) + '…' : text; }
function wrapLines(text, width) {
  var words = String(text).split(/\s+/), lines = [], line = '';
  for (var index = 0; index < words.length; index += 1) {
    if ((line + ' ' + words[index]).trim().length > width && line) { lines.push(line); line = words[index]; }
    else line = (line + ' ' + words[index]).trim();
    if (lines.length >= 6) break;
  }
  if (line && lines.length < 7) lines.push(line);
  return lines;
}
function tagGroupOf(tag) { var colon = tag.indexOf(':'); return colon > 0 ? tag.slice(0, colon) : 'tags'; }
function tagNameOf(tag) { var colon = tag.indexOf(':'); return colon > 0 ? tag.slice(colon + 1) : tag; }
function plural(count, word, many) { return formatInteger(count) + ' ' + (count === 1 ? word : many || word + 's'); }

function statList(rows) {
  return h('dl', { className: 'stat-list' }, rows.filter(Boolean).map(function (row) {
    return h('div', { className: 'stat-row' }, [h('dt', { text: row[0] }), h('dd', { className: row[2] || 'num', text: row[1], title: row[3] || undefined })]);
  }));
}

function card(title, children, className) {
  return h('section', { className: 'card' + (className ? ' ' + className : '') }, [title ? h('h3', { text: title }) : null].concat(children));
}

function sectionHead(title, hint, extra) {
  return h('div', { className: 'section-head' }, [h('h2', { text: title }), hint ? h('span', { className: 'hint', text: hint }) : null, extra || null]);
}

/** Segmented buttons; calls onSelect(value) and keeps aria-pressed in sync. */
function tabs(options, selected, onSelect) {
  var container = h('div', { className: 'tabs', attrs: { role: 'group' } });
  options.forEach(function (option) {
    var button = h('button', { text: option.label, attrs: { type: 'button', 'aria-pressed': option.value === selected ? 'true' : 'false' }, data: { value: option.value } });
    button.addEventListener('click', function () {
      Array.prototype.forEach.call(container.children, function (other) { other.setAttribute('aria-pressed', other === button ? 'true' : 'false'); });
      onSelect(option.value);
    });
    container.appendChild(button);
  });
  return container;
}

/** The 95% interval drawn as a track with the point estimate. */
function ciTrack(score, interval, low, high, baselineScore) {
  var span = high - low || 1;
  function position(value) { return Math.max(0, Math.min(100, ((value - low) / span) * 100)); }
  var track = h('div', { className: 'ci-track', attrs: { role: 'img', 'aria-label': '95% confidence interval ' + formatInterval(interval) } });
  if (interval && isNumber(interval[0]) && isNumber(interval[1])) {
    track.appendChild(h('div', { className: 'ci-range', style: { left: position(interval[0]) + '%', width: Math.max(0.6, position(interval[1]) - position(interval[0])) + '%' } }));
  }
  if (isNumber(baselineScore)) track.appendChild(h('div', { className: 'ci-point baseline', title: 'baseline ' + formatScore(baselineScore), style: { left: position(baselineScore) + '%' } }));
  if (isNumber(score)) track.appendChild(h('div', { className: 'ci-point', style: { left: position(score) + '%' } }));
  return h('div', null, [track, h('div', { className: 'ci-scale num' }, [h('span', { text: formatScore(low, 1) }), h('span', { text: formatScore(high, 1) })])]);
}

var chartRegistry = [];
var chartsAvailable = typeof Chart !== 'undefined';

if (chartsAvailable) {
  Chart.defaults.font.family = getComputedStyle(document.documentElement).getPropertyValue('--font') || 'system-ui, sans-serif';
  Chart.defaults.font.size = 12;
  Chart.defaults.color = COLORS.muted;
  Chart.defaults.borderColor = COLORS.grid;
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.plugins.legend.labels.boxWidth = 10;
  Chart.defaults.plugins.legend.labels.boxHeight = 10;
  Chart.defaults.plugins.tooltip.backgroundColor = 'rgba(17, 24, 39, 0.94)';
  Chart.defaults.plugins.tooltip.padding = 10;
  Chart.defaults.plugins.tooltip.cornerRadius = 8;
  Chart.defaults.plugins.tooltip.titleFont = { weight: '600' };
  Chart.register({
    id: 'rubricateIntervals',
    afterDatasetsDraw: function (chart) {
      var context = chart.ctx;
      var horizontal = chart.options.indexAxis === 'y';
      chart.data.datasets.forEach(function (dataset, datasetIndex) {
        if (!dataset.intervals) return;
        var meta = chart.getDatasetMeta(datasetIndex);
        if (meta.hidden) return;
        var valueScale = horizontal ? chart.scales.x : chart.scales.y;
        meta.data.forEach(function (element, index) {
          var interval = dataset.intervals[index];
          if (!interval || !isNumber(interval[0]) || !isNumber(interval[1])) return;
          var from = valueScale.getPixelForValue(interval[0]);
          var to = valueScale.getPixelForValue(interval[1]);
          var center = horizontal ? element.y : element.x;
          var cap = 3.5;
          context.save();
          context.strokeStyle = dataset.intervalColor || 'rgba(17, 24, 39, 0.7)';
          context.lineWidth = 1.4;
          context.beginPath();
          if (horizontal) {
            context.moveTo(from, center); context.lineTo(to, center);
            context.moveTo(from, center - cap); context.lineTo(from, center + cap);
            context.moveTo(to, center - cap); context.lineTo(to, center + cap);
          } else {
            context.moveTo(center, from); context.lineTo(center, to);
            context.moveTo(center - cap, from); context.lineTo(center + cap, from);
            context.moveTo(center - cap, to); context.lineTo(center + cap, to);
          }
          context.stroke();
          context.restore();
        });
      });
    }
  });
}

/** A chart in a box of the given height; without Chart.js the box says so instead. */
function chartBox(height, config, label) {
  var box = h('div', { className: 'chart-box', style: { height: height + 'px' } });
  if (!chartsAvailable) {
    box.appendChild(h('div', { className: 'callout info', text: 'Charts are unavailable in this copy of the report.' }));
    return { element: box, chart: null };
  }
  var canvas = h('canvas', { attrs: { role: 'img', 'aria-label': label || 'chart' } });
  box.appendChild(canvas);
  var chart = new Chart(canvas, config);
  chartRegistry.push(chart);
  return { element: box, chart: chart };
}

function replaceChart(holder, height, config, label) {
  var previous = holder.firstChild && holder.firstChild.__chart;
  if (previous) previous.destroy();
  holder.textContent = '';
  var made = chartBox(height, config, label);
  made.element.__chart = made.chart;
  holder.appendChild(made.element);
  return made.chart;
}

// A side drawer over the page, shared by the views: keyboard navigation (Esc, ←/→, j/k),
// a deep link in the URL hash, focus handed back on close. Views draw what goes in it.
function createDrawerShell(options) {
  var backdrop = null, panel = null, currentIndex = -1, lastFocus = null;
  var shell = { open: open, close: close, step: step, current: function () { return currentIndex; } };
  document.addEventListener('keydown', function (event) {
    if (currentIndex < 0) return;
    if (event.key === 'Escape') close();
    else if ((event.key === 'ArrowRight' || event.key === 'j') && !isTyping(event)) step(1);
    else if ((event.key === 'ArrowLeft' || event.key === 'k') && !isTyping(event)) step(-1);
  });
  return shell;

  function isTyping(event) { var tag = event.target && event.target.tagName; return tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA'; }

  function step(direction) {
    var order = options.explorer.order();
    var position = Array.prototype.indexOf.call(order, currentIndex);
    var next = position < 0 ? (order.length ? order[0] : -1) : order[position + direction];
    if (next !== undefined && next >= 0) open(next);
  }

  function open(index) {
    if (!panel) {
      lastFocus = document.activeElement;
      backdrop = h('div', { className: 'drawer-backdrop', on: { click: close } });
      panel = h('aside', { className: 'drawer', attrs: { role: 'dialog', 'aria-modal': 'true', 'aria-label': options.noun + ' details' }, data: { testid: options.testid } });
      document.body.appendChild(backdrop);
      document.body.appendChild(panel);
      requestAnimationFrame(function () { backdrop.classList.add('open'); panel.classList.add('open'); });
      document.body.style.overflow = 'hidden';
    }
    currentIndex = index;
    options.explorer.select(index);
    var hash = '#' + options.hashKey + '=' + encodeURIComponent(options.idOf(index));
    if (location.hash !== hash) history.replaceState(null, '', hash);
    render();
    // Texts load in the background; draw again when they arrive, if the drawer still shows this entry.
    if (options.load) options.load(index, function () { if (currentIndex === index) render(); });
  }

  function render() {
    panel.textContent = '';
    options.render(currentIndex, panel);
    var closeButton = panel.querySelector('[data-testid="drawer-close"]');
    if (closeButton && document.activeElement === document.body) closeButton.focus({ preventScroll: true });
  }

  function close() {
    if (!panel) return;
    panel.remove(); backdrop.remove();
    panel = null; backdrop = null; currentIndex = -1;
    document.body.style.overflow = '';
    options.explorer.select(-1);
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
    if (lastFocus && lastFocus.focus) lastFocus.focus();
  }
}

function drawerActions(shell, noun) {
  return h('div', { className: 'drawer-actions' }, [
    h('button', { className: 'icon-button', attrs: { type: 'button', 'aria-label': 'previous ' + noun, title: 'previous (←)' }, on: { click: function () { shell.step(-1); } } }, [icon('up')]),
    h('button', { className: 'icon-button', attrs: { type: 'button', 'aria-label': 'next ' + noun, title: 'next (→)' }, on: { click: function () { shell.step(1); } } }, [icon('down')]),
    h('button', { className: 'icon-button', attrs: { type: 'button', 'aria-label': 'close', title: 'close (Esc)' }, data: { testid: 'drawer-close' }, on: { click: shell.close } }, [icon('close')])
  ]);
}

// The explorers' virtual table: a sortable header and only the rows in view drawn, so a
// report of 100k items scrolls as smoothly as one of ten. Views supply the cells.
// options: columns [{ key, label, width, right, noSort, narrowHidden }], label, emptyText,
// rowData(index), fillRow(index, element), onSort(key), onOpen(index).
function createVirtualTable(options) {
  var ROW_HEIGHT = 40;
  var order = new Int32Array(0), selected = -1, scheduled = false;
  var template = options.columns.map(function (column) { return column.width; }).join(' ');
  var headerRow = h('div', { className: 'vtable-head', style: { 'grid-template-columns': template }, attrs: { role: 'row' } });
  options.columns.forEach(function (column) {
    var cell = h('div', { className: (column.right ? 'right' : '') + (column.narrowHidden ? ' hide-narrow' : ''), attrs: { role: 'columnheader' } });
    if (column.noSort) cell.appendChild(h('span', { text: column.label }));
    else cell.appendChild(h('button', { attrs: { type: 'button', title: 'sort by ' + column.label.toLowerCase() }, data: { sort: column.key }, on: { click: function () { options.onSort(column.key); } } }, [column.label, h('span', { className: 'sort-indicator' })]));
    headerRow.appendChild(cell);
  });
  var spacer = h('div', { className: 'vtable-spacer' });
  var viewport = h('div', { className: 'vtable-viewport', attrs: { role: 'rowgroup', tabindex: '-1' } }, [spacer]);
  viewport.addEventListener('scroll', function () {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(function () { scheduled = false; renderRows(); });
  });
  return {
    element: h('div', { className: 'vtable', attrs: { role: 'grid', 'aria-label': options.label } }, [headerRow, viewport]),
    order: function () { return order; },
    show: function (nextOrder, resetScroll) {
      order = nextOrder;
      spacer.style.height = Math.max(order.length * ROW_HEIGHT, 1) + 'px';
      if (resetScroll) viewport.scrollTop = 0;
      renderRows();
    },
    select: function (index) { selected = index; renderRows(); },
    showSort: function (key, direction) {
      headerRow.querySelectorAll('button[data-sort]').forEach(function (button) {
        var indicator = button.querySelector('.sort-indicator');
        indicator.textContent = '';
        if (button.dataset.sort === key) { button.setAttribute('data-sorted', direction > 0 ? 'asc' : 'desc'); indicator.appendChild(icon(direction > 0 ? 'up' : 'down')); }
        else button.removeAttribute('data-sorted');
      });
    }
  };

  function renderRows() {
    var top = viewport.scrollTop;
    var height = viewport.clientHeight || 600;
    var first = Math.max(0, Math.floor(top / ROW_HEIGHT) - 8);
    var last = Math.min(order.length, Math.ceil((top + height) / ROW_HEIGHT) + 8);
    var fragment = document.createDocumentFragment();
    for (var position = first; position < last; position += 1) fragment.appendChild(row(order[position], position));
    spacer.textContent = '';
    if (order.length === 0) spacer.appendChild(h('div', { className: 'empty-state', text: options.emptyText }));
    spacer.appendChild(fragment);
  }

  function row(index, position) {
    var element = h('div', {
      className: 'vrow' + (index === selected ? ' selected' : ''),
      attrs: { role: 'row', tabindex: '0' },
      data: options.rowData(index),
      style: { top: position * ROW_HEIGHT + 'px', 'grid-template-columns': template },
      on: {
        click: function () { options.onOpen(index); },
        keydown: function (event) { if (event.key === 'Enter') options.onOpen(index); }
      }
    });
    options.fillRow(index, element);
    return element;
  }
}

// Sort state cycles first direction → the other → unsorted, as spreadsheet headers do.
function nextSort(state, key, firstDirection) {
  if (state.sortKey === key) {
    if (state.sortDirection === firstDirection) state.sortDirection = -firstDirection;
    else { state.sortKey = ''; state.sortDirection = 1; }
  } else {
    state.sortKey = key;
    state.sortDirection = firstDirection;
  }
}

// Sorts indexes by a number each; missing values (null, NaN) go last whatever the direction.
function sortByNumber(indexes, valueOf, direction) {
  // Values are read once into an array indexed by entry, not per comparison: sorting 100k rows stays fast.
  var size = 0;
  for (var position = 0; position < indexes.length; position += 1) size = Math.max(size, indexes[position] + 1);
  var values = new Float64Array(size);
  for (position = 0; position < indexes.length; position += 1) {
    var value = valueOf(indexes[position]);
    values[indexes[position]] = isNumber(value) ? value : NaN;
  }
  var list = Array.from(indexes);
  list.sort(function (left, right) {
    var a = values[left], b = values[right];
    var aMissing = a !== a, bMissing = b !== b;
    if (aMissing || bMissing) return aMissing === bMissing ? left - right : aMissing ? 1 : -1;
    return direction * (a - b) || left - right;
  });
  return Int32Array.from(list);
}

function sortByText(indexes, textOf, direction) {
  var collator = new Intl.Collator(undefined, { numeric: true });
  return Int32Array.from(Array.from(indexes).sort(function (left, right) { return direction * collator.compare(textOf(left), textOf(right)) || left - right; }));
}

function showFatal(root, error) {
  root.textContent = '';
  root.appendChild(h('div', { className: 'fatal' }, [
    h('h2', { text: 'This report could not be displayed' }),
    h('p', { className: 'muted', text: error && error.message ? error.message : String(error) })
  ]));
}
`;
