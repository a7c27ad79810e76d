/** The report's stylesheet: one light theme, system fonts, tabular figures for numbers. */
export const reportStyles = String.raw`
:root {
  --bg: #f5f6fa;
  --surface: #ffffff;
  --surface-muted: #f8fafc;
  --border: #e3e7ef;
  --border-strong: #cfd6e3;
  --text: #111827;
  --muted: #566074;
  --faint: #8b94a7;
  --accent: #4f46e5;
  --accent-strong: #4338ca;
  --accent-soft: #eef0fe;
  --baseline: #94a3b8;
  --good: #059669;
  --good-soft: #e8f7f1;
  --bad: #dc2626;
  --bad-soft: #fdeeee;
  --warn: #b45309;
  --warn-soft: #fff6e6;
  --neutral-soft: #eef1f6;
  --radius: 14px;
  --radius-small: 8px;
  --shadow: 0 1px 2px rgba(17, 24, 39, 0.04), 0 6px 20px rgba(17, 24, 39, 0.05);
  --shadow-raised: 0 12px 48px rgba(17, 24, 39, 0.18);
  --font: -apple-system, BlinkMacSystemFont, "Segoe UI Variable", "Segoe UI", Inter, Roboto, "Helvetica Neue", Arial, sans-serif;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
  color-scheme: light;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 14px/1.5 var(--font); -webkit-font-smoothing: antialiased; }
button, input, select { font: inherit; color: inherit; }
.num { font-variant-numeric: tabular-nums; }
.mono { font-family: var(--mono); font-size: 0.92em; }
.muted { color: var(--muted); }
.faint { color: var(--faint); }

.topbar { position: sticky; top: 0; z-index: 20; background: rgba(255, 255, 255, 0.86); backdrop-filter: saturate(1.4) blur(10px); border-bottom: 1px solid var(--border); }
.topbar-inner { max-width: 1320px; margin: 0 auto; padding: 12px 32px; display: flex; align-items: center; gap: 16px; }
.brand { display: flex; align-items: center; gap: 10px; font-weight: 650; letter-spacing: -0.01em; }
.brand-mark { width: 26px; height: 26px; border-radius: 7px; background: linear-gradient(135deg, #6366f1, #4338ca 60%, #312e81); display: grid; place-items: center; color: #fff; font-size: 13px; font-weight: 700; box-shadow: inset 0 -2px 0 rgba(0,0,0,0.15); }
.topbar-title { color: var(--muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; min-width: 0; }
.topbar-nav { margin-left: auto; display: flex; gap: 4px; }
.topbar-nav a { color: var(--muted); text-decoration: none; padding: 6px 10px; border-radius: 8px; font-size: 13px; }
.topbar-nav a:hover { background: var(--neutral-soft); color: var(--text); }

.page { max-width: 1320px; margin: 0 auto; padding: 28px 32px 72px; }
.page-header { display: flex; flex-wrap: wrap; align-items: flex-end; justify-content: space-between; gap: 12px 24px; margin-bottom: 22px; }
.page-header h1 { margin: 0; font-size: 26px; line-height: 1.2; letter-spacing: -0.02em; font-weight: 700; overflow-wrap: anywhere; }
.page-header .subtitle { margin-top: 6px; color: var(--muted); display: flex; flex-wrap: wrap; gap: 6px 14px; }
.section { margin-top: 34px; scroll-margin-top: 72px; }
.section-head { display: flex; align-items: baseline; justify-content: space-between; gap: 12px; margin-bottom: 12px; flex-wrap: wrap; }
.section-head h2 { margin: 0; font-size: 17px; letter-spacing: -0.01em; font-weight: 650; }
.section-head .hint { color: var(--faint); font-size: 12.5px; }

.card { background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow); padding: 18px 20px; min-width: 0; }
.card h3 { margin: 0 0 12px; font-size: 13px; font-weight: 600; color: var(--muted); text-transform: uppercase; letter-spacing: 0.05em; }
.card-head { display: flex; align-items: center; justify-content: space-between; gap: 10px; margin-bottom: 12px; flex-wrap: wrap; }
.card-head h3 { margin: 0; }

.hero { display: grid; grid-template-columns: minmax(300px, 1.25fr) repeat(3, minmax(220px, 1fr)); gap: 16px; }
.hero-score { background: linear-gradient(160deg, #ffffff 0%, #f4f4ff 100%); border-color: #dfe1fb; }
.score-label { color: var(--muted); font-size: 13px; font-weight: 600; display: flex; gap: 8px; align-items: center; }
.score-value { font-size: 52px; font-weight: 720; letter-spacing: -0.03em; line-height: 1.05; margin: 8px 0 4px; color: #1e1b4b; }
.score-ci { color: var(--muted); }
.ci-track { position: relative; height: 8px; border-radius: 99px; background: #e6e8f4; margin: 16px 0 6px; }
.ci-range { position: absolute; top: 0; bottom: 0; border-radius: 99px; background: rgba(79, 70, 229, 0.28); }
.ci-point { position: absolute; top: -4px; width: 4px; height: 16px; margin-left: -2px; border-radius: 2px; background: var(--accent); }
.ci-point.baseline { background: var(--baseline); }
.ci-scale { display: flex; justify-content: space-between; font-size: 11px; color: var(--faint); }
.delta-chip { display: inline-flex; align-items: center; gap: 6px; padding: 3px 10px; border-radius: 99px; font-weight: 650; font-size: 13px; }
.delta-chip.up { background: var(--good-soft); color: var(--good); }
.delta-chip.down { background: var(--bad-soft); color: var(--bad); }
.delta-chip.flat { background: var(--neutral-soft); color: var(--muted); }

.stat-list { display: grid; gap: 7px; margin: 0; }
.stat-row { display: flex; justify-content: space-between; gap: 12px; align-items: baseline; min-width: 0; }
.stat-row dt { color: var(--muted); white-space: nowrap; }
.stat-row dd { margin: 0; font-weight: 560; text-align: right; min-width: 0; overflow-wrap: anywhere; }
.big-number { font-size: 28px; font-weight: 700; letter-spacing: -0.02em; }
.stack-bar { display: flex; height: 8px; border-radius: 99px; overflow: hidden; background: var(--neutral-soft); margin: 10px 0 12px; }
.stack-bar span { display: block; height: 100%; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 14px; font-size: 12.5px; color: var(--muted); }
.legend i { display: inline-block; width: 9px; height: 9px; border-radius: 3px; margin-right: 6px; vertical-align: -0.5px; }

.grid-2 { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 16px; }
.grid-3 { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 16px; }
.span-2 { grid-column: span 2; }
.chart-box { position: relative; width: 100%; }
.chart-note { margin-top: 8px; font-size: 12.5px; color: var(--faint); }

.tabs { display: inline-flex; flex-wrap: wrap; gap: 2px; background: var(--neutral-soft); padding: 3px; border-radius: 10px; }
.tabs button { border: 0; background: transparent; padding: 4px 11px; border-radius: 8px; font-size: 12.5px; color: var(--muted); cursor: pointer; }
.tabs button:hover { color: var(--text); }
.tabs button[aria-pressed="true"] { background: var(--surface); color: var(--text); box-shadow: 0 1px 2px rgba(0,0,0,0.08); font-weight: 600; }

.pill { display: inline-flex; align-items: center; gap: 5px; padding: 1px 8px; border-radius: 99px; font-size: 12px; font-weight: 600; white-space: nowrap; line-height: 20px; }
.pill.ok { background: var(--good-soft); color: var(--good); }
.pill.error { background: var(--warn-soft); color: var(--warn); }
.pill.invalid { background: var(--bad-soft); color: var(--bad); }
.pill.neutral { background: var(--neutral-soft); color: var(--muted); }
.pill.accent { background: var(--accent-soft); color: var(--accent-strong); }
.chip { display: inline-block; padding: 0 7px; border-radius: 6px; background: var(--neutral-soft); color: var(--muted); font-size: 11.5px; line-height: 19px; white-space: nowrap; max-width: 220px; overflow: hidden; text-overflow: ellipsis; vertical-align: middle; }
.chips { display: flex; flex-wrap: wrap; gap: 4px; }

table.data { width: 100%; border-collapse: collapse; font-size: 13px; }
table.data th { text-align: left; font-weight: 600; color: var(--muted); font-size: 12px; padding: 8px 10px; border-bottom: 1px solid var(--border); white-space: nowrap; }
table.data td { padding: 8px 10px; border-bottom: 1px solid var(--border); vertical-align: top; }
table.data tr:last-child td { border-bottom: 0; }
table.data td.num, table.data th.num { text-align: right; }
table.data tr.clickable { cursor: pointer; }
table.data tr.clickable:hover td { background: var(--surface-muted); }
.table-scroll { overflow: auto; max-height: 420px; }
.clamp { display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; }
.up { color: var(--good); }
.down { color: var(--bad); }

.forest { display: grid; gap: 2px; }
.forest-row { display: grid; grid-template-columns: minmax(120px, 1.3fr) 64px 90px minmax(160px, 2fr) 150px; align-items: center; gap: 12px; padding: 6px 4px; border-radius: 8px; font-size: 13px; }
.forest-row:hover { background: var(--surface-muted); }
.forest-row.head { color: var(--faint); font-size: 11.5px; text-transform: uppercase; letter-spacing: 0.04em; }
.forest-row.head:hover { background: transparent; }
.forest-label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.forest-plot { position: relative; height: 18px; }
.forest-axis { position: absolute; top: 8px; left: 0; right: 0; height: 2px; background: var(--neutral-soft); }
.forest-zero { position: absolute; top: 0; bottom: 0; width: 1px; background: var(--border-strong); }
.forest-ci { position: absolute; top: 7px; height: 4px; border-radius: 2px; }
.forest-dot { position: absolute; top: 4px; width: 10px; height: 10px; margin-left: -5px; border-radius: 50%; border: 2px solid #fff; box-shadow: 0 0 0 1px rgba(0,0,0,0.08); }

.explorer-toolbar { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; margin-bottom: 12px; }
.search { position: relative; flex: 1 1 280px; max-width: 440px; }
.search input { width: 100%; padding: 8px 12px 8px 34px; border-radius: 10px; border: 1px solid var(--border-strong); background: var(--surface); outline: none; }
.search input:focus { border-color: var(--accent); box-shadow: 0 0 0 3px rgba(79, 70, 229, 0.15); }
.search svg { position: absolute; left: 11px; top: 50%; transform: translateY(-50%); color: var(--faint); }
select.select { padding: 7px 10px; border-radius: 10px; border: 1px solid var(--border-strong); background: var(--surface); max-width: 260px; }
.toggle { display: inline-flex; align-items: center; gap: 6px; color: var(--muted); font-size: 13px; cursor: pointer; user-select: none; }
.filter-chip { display: inline-flex; align-items: center; gap: 6px; background: var(--accent-soft); color: var(--accent-strong); border-radius: 99px; padding: 3px 6px 3px 11px; font-size: 12.5px; max-width: 420px; }
.filter-chip span { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.filter-chip button { border: 0; background: rgba(67, 56, 202, 0.12); border-radius: 99px; width: 20px; height: 20px; cursor: pointer; line-height: 1; color: inherit; }
.result-count { margin-left: auto; color: var(--muted); font-size: 13px; }

.vtable { border: 1px solid var(--border); border-radius: var(--radius); background: var(--surface); box-shadow: var(--shadow); overflow: hidden; }
.vtable-head, .vrow { display: grid; align-items: center; gap: 12px; padding: 0 16px; }
.vtable-head { height: 40px; background: var(--surface-muted); border-bottom: 1px solid var(--border); font-size: 12px; font-weight: 600; color: var(--muted); }
.vtable-head button { border: 0; background: none; padding: 0; font: inherit; color: inherit; cursor: pointer; display: inline-flex; align-items: center; gap: 4px; white-space: nowrap; }
.vtable-head button:hover { color: var(--text); }
.vtable-head button[data-sorted] { color: var(--accent-strong); }
.vtable-head .right, .vrow .right { justify-content: flex-end; text-align: right; }
.vtable-viewport { position: relative; overflow-y: auto; height: min(62vh, 600px); outline: none; }
.vtable-spacer { position: relative; width: 100%; }
.vrow { position: absolute; left: 0; right: 0; height: 40px; border-bottom: 1px solid #eef1f5; cursor: pointer; font-size: 13px; }
.vrow:hover { background: #f7f8fc; }
.vrow:focus-visible { outline: 2px solid var(--accent); outline-offset: -2px; }
.vrow.selected { background: var(--accent-soft); }
.vrow > div { min-width: 0; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.score-cell { display: flex; align-items: center; gap: 8px; justify-content: flex-end; }
.score-bar { width: 46px; height: 6px; border-radius: 99px; background: var(--neutral-soft); overflow: hidden; flex: none; }
.score-bar span { display: block; height: 100%; border-radius: 99px; background: var(--accent); }
.met-cell { display: flex; align-items: center; gap: 8px; }
.met-bar { display: flex; width: 60px; height: 6px; border-radius: 99px; overflow: hidden; background: var(--neutral-soft); flex: none; }
.empty-state { padding: 48px 16px; text-align: center; color: var(--muted); }

.drawer-backdrop { position: fixed; inset: 0; background: rgba(15, 23, 42, 0.32); z-index: 40; opacity: 0; transition: opacity 0.15s ease; }
.drawer-backdrop.open { opacity: 1; }
.drawer { position: fixed; top: 0; right: 0; bottom: 0; width: min(1180px, 96vw); background: var(--bg); z-index: 41; box-shadow: var(--shadow-raised); display: flex; flex-direction: column; transform: translateX(24px); opacity: 0; transition: transform 0.18s ease, opacity 0.18s ease; }
.drawer.open { transform: none; opacity: 1; }
.drawer-header { background: var(--surface); border-bottom: 1px solid var(--border); padding: 16px 24px; display: flex; gap: 16px; align-items: flex-start; }
.drawer-title { min-width: 0; flex: 1; }
.drawer-title h2 { margin: 0; font-size: 18px; font-family: var(--mono); font-weight: 600; overflow-wrap: anywhere; }
.drawer-title .meta { margin-top: 6px; display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; color: var(--muted); font-size: 12.5px; }
.drawer-score { text-align: right; }
.drawer-score .value { font-size: 28px; font-weight: 700; letter-spacing: -0.02em; line-height: 1.1; }
.icon-button { border: 1px solid var(--border); background: var(--surface); width: 34px; height: 34px; border-radius: 9px; cursor: pointer; display: grid; place-items: center; color: var(--muted); flex: none; }
.icon-button:hover { color: var(--text); border-color: var(--border-strong); }
.icon-button:disabled { opacity: 0.4; cursor: default; }
.drawer-actions { display: flex; gap: 6px; }
.drawer-body { flex: 1; overflow: hidden; display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.1fr); }
.drawer-column { overflow-y: auto; padding: 20px 24px 40px; min-height: 0; }
.drawer-column + .drawer-column { border-left: 1px solid var(--border); background: var(--surface-muted); }
.block-title { font-size: 12px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--faint); font-weight: 650; margin: 18px 0 8px; }
.block-title:first-child { margin-top: 0; }
.message { background: var(--surface); border: 1px solid var(--border); border-radius: 12px; padding: 10px 14px; margin-bottom: 10px; }
.message.user { border-left: 3px solid #a5b4fc; }
.message.assistant { border-left: 3px solid #cbd5e1; }
.message.system { border-left: 3px solid #fcd34d; }
.message-role { font-size: 11.5px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--faint); font-weight: 650; margin-bottom: 4px; }
.text-body { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 13.5px; line-height: 1.6; margin: 0; }
.response-box { background: var(--surface); border: 1px solid #d9dcfb; border-radius: 12px; padding: 14px 16px; box-shadow: 0 0 0 4px rgba(79, 70, 229, 0.05); }
.callout { border-radius: 10px; padding: 10px 14px; margin: 10px 0; font-size: 13px; overflow-wrap: anywhere; }
.callout.error { background: var(--warn-soft); color: #7c2d12; border: 1px solid #fde2b8; }
.callout.info { background: var(--neutral-soft); color: var(--muted); }
.criteria-summary { display: flex; flex-wrap: wrap; align-items: center; gap: 10px 16px; margin-bottom: 12px; }
.criterion { background: var(--surface); border: 1px solid var(--border); border-radius: 12px; padding: 12px 14px; margin-bottom: 8px; display: grid; grid-template-columns: auto minmax(0, 1fr) auto; gap: 4px 12px; }
.criterion.fail { border-left: 3px solid var(--bad); }
.criterion.pass { border-left: 3px solid var(--good); }
.criterion.problem { border-left: 3px solid var(--warn); }
.criterion.skipped { border-left: 3px solid var(--border-strong); }
.criterion.flipped { box-shadow: 0 0 0 2px rgba(79, 70, 229, 0.25); }
.verdict { display: inline-flex; align-items: center; gap: 5px; font-size: 12px; font-weight: 650; border-radius: 99px; padding: 1px 9px; white-space: nowrap; line-height: 20px; }
.verdict.pass { background: var(--good-soft); color: var(--good); }
.verdict.fail { background: var(--bad-soft); color: var(--bad); }
.verdict.problem { background: var(--warn-soft); color: var(--warn); }
.verdict.skipped { background: var(--neutral-soft); color: var(--muted); }
.verdict.ghost { background: transparent; border: 1px dashed var(--border-strong); color: var(--muted); font-weight: 560; }
.points { font-weight: 700; font-size: 13px; white-space: nowrap; }
.points.positive { color: var(--good); }
.points.negative { color: var(--bad); }
.criterion-text { font-size: 13.5px; line-height: 1.5; overflow-wrap: anywhere; }
.criterion-meta { grid-column: 2 / 4; display: flex; flex-wrap: wrap; gap: 4px 8px; align-items: center; font-size: 12px; color: var(--faint); }
.explanation { grid-column: 2 / 4; font-size: 13px; color: var(--muted); background: var(--surface-muted); border-radius: 8px; padding: 8px 10px; margin-top: 4px; white-space: pre-wrap; overflow-wrap: anywhere; }
.explanation b { color: var(--text); font-weight: 600; }
.criterion .verdicts { display: flex; flex-direction: column; gap: 4px; align-items: flex-start; }

.verdict.pair-a { background: var(--accent-soft); color: var(--accent-strong); }
.verdict.pair-b { background: #e6f6f4; color: #0f766e; }
.verdict.pair-tie { background: var(--neutral-soft); color: var(--muted); }
.verdict.pair-inconsistent { background: var(--warn-soft); color: var(--warn); }
.verdict.pair-none { background: var(--bad-soft); color: var(--bad); }
.verdict.pair-absent { background: transparent; border: 1px dashed var(--border-strong); color: var(--faint); font-weight: 560; }
.pair-drawer-body { flex: 1; overflow-y: auto; padding: 20px 24px 40px; min-height: 0; }
.pair-responses { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 14px; }
.pair-response { box-shadow: none; border-color: var(--border); }
.pair-response.preferred { border-color: #c7cbfa; box-shadow: 0 0 0 4px rgba(79, 70, 229, 0.06); }
.pair-response-head { display: flex; justify-content: space-between; align-items: center; gap: 8px; margin-bottom: 8px; }
.pair-response-text { max-height: 460px; overflow-y: auto; }
.pair-comparison { background: var(--surface); border: 1px solid var(--border); border-radius: 12px; padding: 12px 14px; margin-bottom: 10px; }
.pair-comparison-head { display: flex; justify-content: space-between; align-items: flex-start; gap: 12px; margin-bottom: 6px; }
.pair-comparison-title { min-width: 0; font-size: 12px; }
.order-row { border-top: 1px solid var(--border); padding: 8px 0 2px; display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: 4px 12px; align-items: center; }
.order-row .explanation { grid-column: 1 / 3; margin-top: 0; }
.order-label { display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; font-size: 12.5px; }

.trajectory-toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 14px; margin-bottom: 8px; font-size: 12.5px; }
.link-button { border: 0; background: none; padding: 0; color: var(--accent-strong); cursor: pointer; font-size: 12.5px; }
.step { background: var(--surface); border: 1px solid var(--border); border-left: 3px solid #cbd5e1; border-radius: 10px; margin-bottom: 6px; }
.step > summary { cursor: pointer; padding: 6px 12px; display: flex; gap: 8px; align-items: baseline; font-size: 12.5px; list-style-position: inside; min-width: 0; }
.step > .step-body { padding: 0 12px 10px; }
.step-number { color: var(--faint); font-weight: 650; white-space: nowrap; }
.step-kind { text-transform: uppercase; letter-spacing: 0.05em; font-size: 11px; font-weight: 650; color: var(--muted); white-space: nowrap; }
.step-preview { color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; flex: 1; }
.step-tool { font-weight: 650; color: var(--accent-strong); overflow-wrap: anywhere; }
.step.step-user { border-left-color: #a5b4fc; }
.step.step-system { border-left-color: #fcd34d; }
.step.step-reasoning { border-left-color: #e2e8f0; background: var(--surface-muted); }
.step.step-tool_call { border-left-color: var(--accent); background: var(--accent-soft); }
.step.step-tool_result { border-left-color: #0f766e; }
.step.step-revealed { box-shadow: 0 0 0 3px rgba(245, 158, 11, 0.45); }
.step-cited-by { margin-left: auto; }
.cited-steps { grid-column: 2 / 4; display: flex; flex-wrap: wrap; gap: 4px; align-items: center; font-size: 12px; color: var(--faint); }
.cited-steps button { border: 1px solid var(--border-strong); background: var(--surface); border-radius: 6px; padding: 0 7px; font-size: 11.5px; line-height: 19px; cursor: pointer; color: var(--accent-strong); }
.report-image { margin: 8px 0; display: inline-block; max-width: 100%; }
.report-image img { display: block; max-width: 100%; max-height: 420px; border: 1px solid var(--border); border-radius: 8px; background: repeating-conic-gradient(#f1f5f9 0 25%, #fff 0 50%) 50% / 16px 16px; image-rendering: auto; }
.report-image figcaption { font-size: 11.5px; color: var(--faint); margin-top: 2px; white-space: normal; }
.report-image.missing .image-missing { border: 1px dashed var(--border-strong); border-radius: 8px; padding: 14px; color: var(--muted); background: var(--surface-muted); font-size: 12.5px; white-space: normal; }

.loading { display: grid; place-items: center; min-height: 60vh; color: var(--muted); gap: 14px; text-align: center; }
.spinner { width: 28px; height: 28px; border-radius: 50%; border: 3px solid #e0e3f4; border-top-color: var(--accent); animation: spin 0.8s linear infinite; }
@keyframes spin { to { transform: rotate(360deg); } }
.fatal { max-width: 640px; margin: 12vh auto; background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); padding: 24px; box-shadow: var(--shadow); }
.footer { margin-top: 48px; padding-top: 18px; border-top: 1px solid var(--border); color: var(--faint); font-size: 12.5px; display: flex; flex-wrap: wrap; gap: 6px 18px; }

.matrix { display: grid; grid-template-columns: auto 1fr 1fr; gap: 6px; max-width: 460px; }
.matrix .axis { font-size: 12px; color: var(--muted); display: flex; align-items: center; justify-content: center; text-align: center; padding: 4px; }
.matrix .cell { border-radius: 10px; padding: 16px 12px; text-align: center; }
.matrix .cell .count { font-size: 24px; font-weight: 700; letter-spacing: -0.02em; }
.matrix .cell .share { font-size: 12px; opacity: 0.85; }
.metric-card .metric-value { font-size: 30px; font-weight: 700; letter-spacing: -0.02em; }
.metric-card .metric-ci { color: var(--muted); font-size: 12.5px; }

.button { border: 1px solid var(--border-strong); background: var(--surface); border-radius: 9px; padding: 5px 12px; cursor: pointer; font-size: 13px; font-weight: 560; }
.button:hover { border-color: var(--accent); color: var(--accent-strong); }
.button:disabled { opacity: 0.45; cursor: default; }
.export-buttons { display: inline-flex; gap: 8px; align-items: center; }

.made-up-banner { background: #fdecec; border: 1px solid #f1a7a7; border-left: 4px solid #b91c1c; border-radius: var(--radius); padding: 14px 18px; margin-bottom: 18px; color: #7f1d1d; }
.chip.made-up { background: #fdecec; color: #991b1b; border-color: #f1a7a7; }
.made-up-banner strong { display: block; margin-bottom: 4px; }
.failure-banner { background: var(--warn-soft); border: 1px solid #f5c98a; border-left: 4px solid var(--warn); border-radius: var(--radius); padding: 14px 18px; margin-bottom: 18px; color: #7c2d12; }
.failure-run + .failure-run { margin-top: 14px; padding-top: 14px; border-top: 1px solid #f5d9ae; }
.failure-headline { font-size: 17px; font-weight: 680; letter-spacing: -0.01em; }
.failure-note { margin: 4px 0 8px; font-size: 13px; }
.errors-table { background: rgba(255, 255, 255, 0.7); border-radius: 8px; }
.errors-table td.clamp { max-width: 720px; }
.failure-advice { margin: 10px 0 0; padding-left: 18px; font-size: 13px; }
.run-caption { font-size: 12px; color: var(--faint); margin: 10px 0 6px; overflow-wrap: anywhere; }
.run-caption:first-of-type { margin-top: 0; }

.review-bar { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; background: var(--surface); border: 1px solid var(--border); border-radius: 12px; padding: 8px 14px; margin-bottom: 12px; font-size: 13px; }
.review-title { font-weight: 650; }
.review-name, .review-note { padding: 4px 9px; border-radius: 8px; border: 1px solid var(--border-strong); background: var(--surface); min-width: 0; }
.review-name { width: 140px; }
.review { grid-column: 1 / 4; display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: center; border-top: 1px dashed var(--border); margin-top: 6px; padding-top: 8px; font-size: 12.5px; }
.review-label { color: var(--faint); font-weight: 600; }
.review-note { flex: 1 1 200px; font-size: 12.5px; }
.chip.review-agree { background: var(--good-soft); color: var(--good); }
.chip.review-disagree { background: var(--bad-soft); color: var(--bad); }
.chip.error { background: var(--bad-soft); color: var(--bad); }
.criterion.blind { border-left: 3px dashed var(--border-strong); }
.criteria-filter { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 12px; margin-bottom: 10px; }
.labels-line { grid-column: 2 / 4; font-size: 12.5px; color: var(--muted); }
.labels-line.disagree { color: var(--bad); }
.judge-call { grid-column: 2 / 4; font-size: 12.5px; border: 1px solid var(--border); border-radius: 8px; background: var(--surface-muted); margin-top: 4px; }
.judge-call > summary { cursor: pointer; padding: 5px 10px; color: var(--muted); }
.call-body { padding: 0 10px 10px; }
.call-part { font-size: 11px; text-transform: uppercase; letter-spacing: 0.05em; color: var(--faint); font-weight: 650; margin: 8px 0 3px; }
.call-settings > summary { cursor: pointer; }
.call-text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; max-height: 320px; overflow: auto; background: var(--surface); border: 1px solid var(--border); border-radius: 6px; padding: 6px 8px; font-size: 12px; }
.occurrence { background: var(--surface); border: 1px solid var(--border); border-radius: 10px; padding: 8px 12px; margin-bottom: 6px; display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; }
.occurrence .explanation { flex-basis: 100%; margin-top: 0; }
.snippet { color: var(--muted); }
.response-title { display: flex; align-items: center; justify-content: space-between; gap: 8px; }

.markdown { font-size: 13.5px; line-height: 1.6; overflow-wrap: anywhere; }
.markdown p, .markdown ul, .markdown ol, .markdown blockquote, .markdown pre, .markdown .md-table { margin: 0 0 10px; }
.markdown ul, .markdown ol { padding-left: 22px; }
.markdown .md-heading { margin: 14px 0 6px; font-size: 14.5px; }
.markdown blockquote { border-left: 3px solid var(--border-strong); padding-left: 10px; color: var(--muted); }
.markdown .md-code { background: var(--surface-muted); border: 1px solid var(--border); border-radius: 8px; padding: 8px 10px; overflow: auto; font-family: var(--mono); font-size: 12.5px; white-space: pre; }
.markdown .md-inline-code { background: var(--neutral-soft); border-radius: 4px; padding: 0 4px; font-family: var(--mono); font-size: 0.92em; }
.markdown .md-link { color: var(--accent-strong); text-decoration: underline dotted; }
.markdown .md-url { color: var(--faint); font-size: 0.88em; }
.markdown .md-image { color: var(--faint); font-style: italic; }
.markdown hr { border: 0; border-top: 1px solid var(--border); margin: 12px 0; }
.markdown > :first-child { margin-top: 0; }
.md-table { overflow-x: auto; }

.probe-flag { color: var(--bad); font-weight: 700; }
.grid-cell { display: inline-flex; align-items: center; justify-content: flex-end; gap: 4px; }
.run-link { color: var(--accent-strong); text-decoration: none; font-weight: 600; }
.run-link:hover { text-decoration: underline; }
.verdict-dot { display: inline-block; width: 14px; height: 14px; border-radius: 4px; vertical-align: middle; }
.verdict-dot.pass { background: var(--good); }
.verdict-dot.fail { background: var(--bad); }
.verdict-dot.problem { background: var(--warn); }
.verdict-dot.skipped { background: var(--border-strong); }
.verdict-dot.absent { background: transparent; border: 1px dashed var(--border-strong); }
table.verdict-grid td, table.verdict-grid th { text-align: center; }
table.verdict-grid td:first-child, table.verdict-grid th:first-child { text-align: left; }

@media (max-width: 1100px) {
  .hero { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .grid-3 { grid-template-columns: repeat(2, minmax(0, 1fr)); }
}
@media (max-width: 860px) {
  .page { padding: 20px 16px 56px; }
  .topbar-inner { padding: 10px 16px; }
  .topbar-nav { display: none; }
  .hero, .grid-2, .grid-3 { grid-template-columns: minmax(0, 1fr); }
  .span-2 { grid-column: auto; }
  .drawer { width: 100vw; }
  .drawer-body { grid-template-columns: minmax(0, 1fr); overflow-y: auto; }
  .drawer-column { overflow: visible; }
  .drawer-column + .drawer-column { border-left: 0; border-top: 1px solid var(--border); }
  .pair-responses { grid-template-columns: minmax(0, 1fr); }
  .forest-row { grid-template-columns: minmax(90px, 1fr) 70px minmax(100px, 1.4fr); }
  .forest-row .hide-narrow { display: none; }
  .hide-narrow { display: none !important; }
}
@media print {
  .topbar, .explorer-toolbar, .vtable { display: none; }
  body { background: #fff; }
  .card { box-shadow: none; }
}
`;
