/**
 * Verifier distillation: one row per (prompt, response, criterion) with the verdict, its
 * rationale, P(met) where the run had one, the judge's provenance and the human label where a
 * labels file gives one. As chat examples (`messages`), each row is the exact per-criterion
 * grading prompt rubricate sends and the verdict JSON the judge answered, so a model fine-tuned
 * on them can be served back as a `gguf:` or OpenAI-compatible judge with the same template;
 * as a `table`, one flat record per verdict.
 */
import { withDefaultSampling } from '../pipeline/defaults.js';
import { createPerCriterionStrategy } from '../grading/strategies.js';
import type { LabelIndex } from '../meta/labels.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { ExplanationLength } from '../spec/run-spec.js';
import type { Candidate, LeftOut } from './candidates.js';
import type { ExportedRow } from './preference.js';

export const distillFormats = ['messages', 'table'] as const;
export type DistillFormat = (typeof distillFormats)[number];

/** The majority of a criterion's human labels; undefined when none, or tied. */
function majority(labels: readonly boolean[] | undefined): boolean | undefined {
  if (!labels || labels.length === 0) return undefined;
  const met = labels.filter(Boolean).length;
  return met * 2 === labels.length ? undefined : met * 2 > labels.length;
}

export function distillRows(
  candidates: readonly Candidate[],
  options: { format: DistillFormat; explanation: ExplanationLength; labels?: LabelIndex; target: 'judge' | 'label' },
  leftOut: LeftOut,
): ExportedRow[] {
  const strategy = createPerCriterionStrategy({ sampling: withDefaultSampling(undefined), explanation: options.explanation });
  const rows: ExportedRow[] = [];
  for (const candidate of candidates) {
    const { record } = candidate;
    const judged = record.criteria.filter((criterion) => {
      const reason =
        criterion.source !== 'judge'
          ? 'criterion decided by a deterministic check, not the judge'
          : criterion.status !== 'ok' || criterion.met === null
            ? 'criterion without a verdict'
            : // Results keep an ordinal criterion's label, not its scale: its prompt cannot be rebuilt.
              criterion.label !== undefined
              ? 'ordinal criterion (results keep no scale to rebuild its prompt from)'
              : undefined;
      if (reason) leftOut.add(reason);
      return reason === undefined;
    });
    if (judged.length === 0) continue;
    const item = normalizeItem({
      id: record.id,
      prompt: candidate.prompt,
      response: candidate.response,
      ...(record.reference !== undefined ? { reference: record.reference } : {}),
      rubric: { criteria: judged.map(({ id, text, points, tags, kind }) => ({ id, text, points, tags, kind })) },
    });
    const tasks = strategy.plan(item, item.rubric.criteria);
    judged.forEach((criterion, index) => {
      const label = majority(options.labels?.byItem.get(record.id)?.get(criterion.id));
      const met = options.target === 'label' ? label : criterion.met!;
      if (met === undefined) return leftOut.add('no human label (or a tied one) for --target label');
      if (options.explanation !== 'none' && criterion.explanation === undefined) return leftOut.add('verdict has no explanation (export with --explanation none)');
      const rule = { kind: 'distill', target: options.target, template_version: strategy.templateVersion, id: record.id, criterion_id: criterion.id, source: candidate.source };
      if (options.format === 'table') {
        rows.push({
          row: {
            item_id: record.id,
            criterion_id: criterion.id,
            prompt: candidate.prompt,
            response: candidate.response,
            criterion: criterion.text,
            points: criterion.points,
            tags: criterion.tags,
            met: criterion.met,
            ...(criterion.explanation !== undefined ? { explanation: criterion.explanation } : {}),
            ...(criterion.probability !== undefined ? { probability: criterion.probability } : {}),
            ...(label !== undefined ? { label } : {}),
            judge: record.judge ? { id: record.judge.id, model: record.judge.model, template_version: record.judge.template_version } : null,
          },
          rule,
        });
        return;
      }
      const answer = options.explanation === 'none' ? { criteria_met: met } : { explanation: criterion.explanation, criteria_met: met };
      const messages = tasks[index].request.messages.map((message) => ({ role: message.role, content: message.content }));
      rows.push({ row: { messages: [...messages, { role: 'assistant', content: JSON.stringify(answer) }] }, rule });
    });
  }
  return rows;
}
