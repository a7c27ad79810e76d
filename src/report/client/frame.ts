/** Page chrome every view shares: sticky top bar with section links, page header, footer. */
import type { ReportPayload } from '../types.js';
import { h, type Child } from './common.js';

export interface FrameOptions {
  sections?: Array<{ id: string; label: string }>;
  subtitle?: Child[];
  headerExtra?: Node | null;
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
  root.appendChild(page);
  return page;
}

export function pageFooter(payload: PageInfo, parts?: string[]): HTMLElement {
  return h('footer', { className: 'footer' }, [h('span', { text: 'rubricate ' + payload.rubricateVersion }), ...(parts || []).map(function (part) { return h('span', { text: part }); })]);
}
