/** Page chrome every view shares: sticky top bar with section links, page header, footer. */
import type { ReportPayload } from '../types.js';
import { madeUpNotice } from '../../util/made-up.js';
import { h, type Child } from './common.js';

export interface FrameOptions {
  sections?: Array<{ id: string; label: string }>;
  subtitle?: Child[];
  headerExtra?: Node | null;
  /** Who made the verdicts up (the scripted judge, `rubricate fake-judge`): a banner under the title says so before any figure. */
  madeUpBy?: string | null;
}

/** The fields every payload has. */
type PageInfo = Pick<ReportPayload, 'title' | 'generatedAt' | 'rubricateVersion'>;

export function pageFrame(root: HTMLElement, payload: PageInfo, options: FrameOptions): HTMLElement {
  const nav = h('nav', { className: 'topbar-nav' }, (options.sections || []).map(function (section) {
    return h('a', { text: section.label, attrs: { href: '#' + section.id } , on: { click: function (event) {
      const target = document.getElementById(section.id);
      if (target) { event.preventDefault(); target.scrollIntoView({ behavior: 'smooth', block: 'start' }); }
    } } });
  }));
  root.appendChild(h('header', { className: 'topbar' }, [h('div', { className: 'topbar-inner' }, [
    h('div', { className: 'brand' }, [h('div', { className: 'brand-mark', text: 'r' }), h('span', { text: 'rubricate' })]),
    h('div', { className: 'topbar-title', text: payload.title }),
    nav
  ])]));
  const page = h('main', { className: 'page' });
  const generated = new Date(payload.generatedAt);
  page.appendChild(h('div', { className: 'page-header' }, [
    h('div', null, [
      h('h1', { text: payload.title }),
      h('div', { className: 'subtitle' }, [...(options.subtitle || []), h('span', { className: 'faint', text: 'generated ' + (isNaN(generated.getTime()) ? payload.generatedAt : generated.toLocaleString()) })])
    ]),
    options.headerExtra || null
  ]));
  if (options.madeUpBy) page.appendChild(madeUpBanner(options.madeUpBy));
  root.appendChild(page);
  return page;
}

/** The header banner of a page whose verdicts are made up: no score below it is a model's. */
export function madeUpBanner(by: string): HTMLElement {
  return h('section', { className: 'made-up-banner', attrs: { role: 'alert' }, data: { testid: 'made-up-banner' } }, [
    h('strong', { text: madeUpNotice(by) }),
    h('div', { text: 'No model was asked: every verdict, score and figure on this page is scripted, to try the tools or test wiring. Do not read it as a measurement.' })
  ]);
}

export function pageFooter(payload: PageInfo, parts?: string[]): HTMLElement {
  return h('footer', { className: 'footer' }, [h('span', { text: 'rubricate ' + payload.rubricateVersion }), ...(parts || []).map(function (part) { return h('span', { text: part }); })]);
}
