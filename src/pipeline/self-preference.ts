/**
 * The self-preference guard: a judge grading answers of its own model, or of its family, is
 * flagged (`warn`, the default) or not asked at all (`refuse`). The model under test is the run's
 * (`guard.modelUnderTest`, `--model-under-test`) or each item's (`metadata.model`; a pair's
 * `metadata.model_a` and `metadata.model_b`). A run told its model under test is refused at
 * start when a judge is related to it; an item naming a related model is, under `refuse`, an item
 * in error (SELF_PREFERENCE_REFUSED) whose criteria were never sent. Results record both models.
 */
import { RubricateError } from '../errors.js';
import type { SelfPreferenceNote } from '../grading/types.js';
import { modelRelation, type ModelRelation } from '../judges/model-family.js';
import type { Judge } from '../judges/types.js';
import type { GuardSpec } from '../spec/run-spec.js';

const strength: Record<ModelRelation, number> = { unrelated: 0, 'same-family': 1, 'same-model': 2 };

export class SelfPreferenceGuard {
  /** Items flagged (related) and refused, for the run summary. */
  readonly counts = { flagged: 0, refused: 0 };
  private readonly policy: 'warn' | 'refuse';

  /** `judges`: every judge that may decide a criterion (a jury's members, a cascade's stages). */
  constructor(
    private readonly judges: readonly Judge[],
    private readonly guard: GuardSpec,
  ) {
    this.policy = guard.selfPreference ?? 'warn';
    const told = guard.modelUnderTest;
    if (told !== undefined && this.policy === 'refuse') {
      const note = this.noteFor([told]);
      if (note && note.relation !== 'unrelated') {
        throw new RubricateError('CONFIG_INVALID', `the judge ${note.judge} is ${note.relation === 'same-model' ? 'the model under test' : 'of the family of the model under test'} (${told}): --self-preference refuse grades nothing it would judge; choose a judge of another family`, { field: 'self-preference' });
      }
    }
  }

  /** The strongest relation between a judge and any of the models, if any model is named. */
  private noteFor(models: ReadonlyArray<string | undefined>): SelfPreferenceNote | undefined {
    let best: SelfPreferenceNote | undefined;
    for (const model of models) {
      if (model === undefined || model === '') continue;
      for (const judge of this.judges) {
        const relation = modelRelation(judge.provenance.model, model);
        if (!best || strength[relation] > strength[best.relation]) best = { modelUnderTest: model, judge: judge.provenance.id, relation, policy: this.policy };
      }
    }
    return best;
  }

  /**
   * What the results record for an item whose answers come from `models` (the run's model under
   * test when told, else the item's): a note when a judge is related, or when the run named its
   * model under test; none otherwise. Counts flagged and refused items.
   */
  check(itemModels: ReadonlyArray<string | undefined>): SelfPreferenceNote | undefined {
    const note = this.noteFor(this.guard.modelUnderTest !== undefined ? [this.guard.modelUnderTest] : itemModels);
    if (!note) return undefined;
    if (note.relation !== 'unrelated') {
      this.counts.flagged += 1;
      if (note.policy === 'refuse') this.counts.refused += 1;
    } else if (this.guard.modelUnderTest === undefined) return undefined;
    return note;
  }
}

/** The models an item's metadata names as the authors of its answers. */
export function modelsOf(metadata: Record<string, unknown> | undefined, fields: readonly string[]): Array<string | undefined> {
  return fields.map((field) => (typeof metadata?.[field] === 'string' ? (metadata[field] as string) : undefined));
}

export function refusalOf(note: SelfPreferenceNote): RubricateError {
  return new RubricateError('SELF_PREFERENCE_REFUSED', `not graded: the judge ${note.judge} is ${note.relation === 'same-model' ? 'the model under test' : 'of the same family as the model under test'} (${note.modelUnderTest}), and --self-preference is refuse`);
}
