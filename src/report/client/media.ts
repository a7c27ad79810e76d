/**
 * Trajectories and images in the item drawer. A trajectory response shows as numbered steps,
 * each collapsible, tool calls and their results marked; the steps a verdict cites link to
 * them. An image shows where its "[image N: …]" placeholder stood, from the bytes embedded in
 * the report, or as a placeholder box saying why it is not there. All data goes in as text
 * nodes and attribute values.
 */
import { h } from './common.js';
import type { DecodedStep } from './decode.js';
import type { ReportImage } from '../types.js';

const imagePlaceholder = /\[image (\d+): [^\]\n]*\]/g;

const stepLabels: Record<string, string> = {
  system: 'system', user: 'user', assistant: 'assistant', reasoning: 'reasoning', tool_call: 'tool call', tool_result: 'tool result'
};

/** Steps shown open at first: what was said and done; reasoning and long tool results start folded. */
function startsOpen(step: DecodedStep): boolean {
  if (step.kind === 'reasoning') return false;
  if (step.kind === 'tool_result') return step.body.length <= 400;
  return true;
}

function imageFigure(image: ReportImage): HTMLElement {
  const caption = 'image ' + image.index + ' · ' + image.place + ' · ' + image.mediaType + ' · ' + image.bytes + ' bytes · sha256 ' + image.sha256.slice(0, 16);
  if (image.dataUrl) {
    return h('figure', { className: 'report-image', data: { testid: 'image', imageIndex: image.index, sha256: image.sha256 } }, [
      h('img', { attrs: { src: image.dataUrl, alt: 'image ' + image.index + ' (' + image.place + ')', loading: 'lazy' } }),
      h('figcaption', { text: caption })
    ]);
  }
  return h('figure', { className: 'report-image missing', data: { testid: 'image-placeholder', imageIndex: image.index, sha256: image.sha256 } }, [
    h('div', { className: 'image-missing', text: 'Image ' + image.index + ' not shown: ' + (image.omitted || 'its bytes are not in the report') }),
    h('figcaption', { text: caption })
  ]);
}

/** Text with each image placeholder replaced by the image (or its placeholder box). */
export function textWithImages(text: string, images: readonly ReportImage[] | undefined, props: { className?: string; testid?: string } = {}): HTMLElement {
  const container = h('div', { className: props.className || 'text-body', data: props.testid ? { testid: props.testid } : undefined });
  if (!images || images.length === 0) {
    container.textContent = text;
    return container;
  }
  const byIndex: Record<number, ReportImage> = {};
  images.forEach(function (image) { byIndex[image.index] = image; });
  let last = 0;
  text.replace(imagePlaceholder, function (match: string, number: string, offset: number): string {
    const image = byIndex[Number(number)];
    if (!image) return match;
    if (offset > last) container.appendChild(document.createTextNode(text.slice(last, offset)));
    container.appendChild(imageFigure(image));
    last = offset + match.length;
    return match;
  });
  if (last < text.length) container.appendChild(document.createTextNode(text.slice(last)));
  return container;
}

export interface TrajectoryView {
  element: HTMLElement;
  /** Opens a step, scrolls it into view and marks it; false when there is no such step. */
  reveal(step: number): boolean;
}

export function trajectoryView(steps: readonly DecodedStep[], images: readonly ReportImage[] | undefined, cited: Record<number, string[]>): TrajectoryView {
  const elements: HTMLDetailsElement[] = [];
  const toolCalls = steps.filter(function (step) { return step.kind === 'tool_call'; }).length;
  const list = h('div', { className: 'trajectory-steps' });
  steps.forEach(function (step) {
    const summary = h('summary', null, [
      h('span', { className: 'step-number num', text: 'step ' + step.number }),
      h('span', { className: 'step-kind', text: stepLabels[step.kind] || step.kind }),
      step.toolName ? h('span', { className: 'step-tool mono', text: step.toolName, data: { testid: 'step-tool' } }) : null,
      step.kind === 'tool_call' || step.kind === 'tool_result' ? null : h('span', { className: 'step-preview', text: step.body.slice(0, 120) }),
      cited[step.number] ? h('span', { className: 'chip step-cited-by', text: 'cited by ' + cited[step.number].length, title: cited[step.number].join(', ') }) : null
    ]);
    const body = step.kind === 'tool_call'
      ? h('pre', { className: 'text-body mono step-body', text: step.body })
      : textWithImages(step.body, images, { className: 'text-body step-body' + (step.kind === 'tool_result' ? ' mono' : '') });
    const element = h('details', { className: 'step step-' + step.kind, data: { testid: 'step', step: step.number, kind: step.kind } }, [summary, body]);
    element.open = startsOpen(step);
    elements.push(element);
    list.appendChild(element);
  });
  function setAll(open: boolean) { elements.forEach(function (element) { element.open = open; }); }
  const toolbar = h('div', { className: 'trajectory-toolbar' }, [
    h('span', { className: 'num muted', text: steps.length + ' steps · ' + toolCalls + ' tool call' + (toolCalls === 1 ? '' : 's'), data: { testid: 'trajectory-summary' } }),
    h('button', { className: 'link-button', text: 'Expand all', attrs: { type: 'button' }, data: { testid: 'expand-steps' }, on: { click: function () { setAll(true); } } }),
    h('button', { className: 'link-button', text: 'Collapse all', attrs: { type: 'button' }, data: { testid: 'collapse-steps' }, on: { click: function () { setAll(false); } } })
  ]);
  const element = h('div', { className: 'trajectory', data: { testid: 'trajectory' } }, [toolbar, list]);
  return {
    element: element,
    reveal: function (number: number): boolean {
      const target = elements[number - 1];
      if (!target) return false;
      elements.forEach(function (each) { each.classList.remove('step-revealed'); });
      target.open = true;
      target.classList.add('step-revealed');
      target.scrollIntoView({ block: 'center' });
      return true;
    }
  };
}
