/** Page chrome every view shares: sticky top bar with section links, page header, footer. */
export const clientFrameSource = String.raw`
function pageFrame(root, payload, options) {
  var nav = h('nav', { className: 'topbar-nav' }, (options.sections || []).map(function (section) {
    return h('a', { text: section.label, attrs: { href: '#' + section.id } , on: { click: function (event) {
      var target = document.getElementById(section.id);
      if (target) { event.preventDefault(); target.scrollIntoView({ behavior: 'smooth', block: 'start' }); }
    } } });
  }));
  root.appendChild(h('header', { className: 'topbar' }, [h('div', { className: 'topbar-inner' }, [
    h('div', { className: 'brand' }, [h('div', { className: 'brand-mark', text: 'r' }), h('span', { text: 'rubricate' })]),
    h('div', { className: 'topbar-title', text: payload.title }),
    nav
  ])]));
  var page = h('main', { className: 'page' });
  var generated = new Date(payload.generatedAt);
  page.appendChild(h('div', { className: 'page-header' }, [
    h('div', null, [
      h('h1', { text: payload.title }),
      h('div', { className: 'subtitle' }, (options.subtitle || []).concat([h('span', { className: 'faint', text: 'generated ' + (isNaN(generated.getTime()) ? payload.generatedAt : generated.toLocaleString()) })]))
    ]),
    options.headerExtra || null
  ]));
  root.appendChild(page);
  return page;
}

function pageFooter(payload, parts) {
  return h('footer', { className: 'footer' }, [h('span', { text: 'rubricate ' + payload.rubricateVersion })].concat((parts || []).map(function (part) { return h('span', { text: part }); })));
}
`;
