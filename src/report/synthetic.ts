/**
 * Synthetic results files for the report benchmark and tests: realistic shapes and sizes
 * (HealthBench-like tags, penalties, explanations, a few errors), seeded so every run writes
 * the same bytes. Not a stand-in for real grading: verdicts are drawn, not judged.
 */
import { JsonLinesWriter } from '../util/files.js';
import type { GradedCriterion, ResultRecord } from '../results/results.js';
import { healthbenchScoring } from '../scoring/registry.js';
import { toScoredItem } from '../results/results.js';
import { seededRandom, randomInteger, type RandomSource } from '../util/random.js';

const words = (
  'the patient should consider a doctor about symptoms with care for pain and blood pressure daily dose medication risk ' +
  'treatment response clear advice explain when to seek urgent help fever infection cough headache chest rest fluids ' +
  'sleep diet exercise history allergy test result normal range follow up clinic emergency safety warning signs child ' +
  'adult older pregnant dosage hours days weeks monitor temperature hydration guidance evidence recommend avoid ' +
  'mention specific context question ask clarify provide information accurate complete concise empathetic tone ' +
  'language simple medical terms condition diagnosis possible likely uncommon severe mild moderate chronic acute ' +
  'therapy option benefit harm side effect interaction over counter prescription pharmacist nurse hospital local ' +
  'guideline national region access cost insurance support family caregiver mental health stress anxiety mood ' +
  'breathing heart rate oxygen level glucose sugar insulin kidney liver skin rash swelling wound bleeding injury ' +
  'fracture sprain ice heat elevation antibiotic antiviral vaccine schedule booster screening prevention lifestyle ' +
  'smoking alcohol weight nutrition vitamin supplement iron calcium water intake appointment referral specialist ' +
  'because however therefore although unless while also only not never always often usually sometimes may might ' +
  'response mentions states suggests includes omits fails correctly incorrectly appropriately addresses user asks'
).split(' ');

const axes = ['accuracy', 'completeness', 'communication_quality', 'context_awareness', 'instruction_following'];
const themes = ['emergency_referrals', 'context_seeking', 'global_health', 'health_data_tasks', 'expertise_tailored_communication', 'responding_under_uncertainty', 'response_depth'];

function sentence(random: RandomSource, minimum: number, maximum: number): string {
  const count = minimum + randomInteger(random, maximum - minimum + 1);
  const chosen: string[] = [];
  for (let index = 0; index < count; index += 1) chosen.push(words[randomInteger(random, words.length)]);
  const text = chosen.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function paragraph(random: RandomSource, sentences: number, minimumWords: number, maximumWords: number): string {
  const parts: string[] = [];
  for (let index = 0; index < sentences; index += 1) parts.push(sentence(random, minimumWords, maximumWords));
  return parts.join(' ');
}

export interface SyntheticResultsOptions {
  items: number;
  criteriaPerItem: number;
  seed?: number;
  /** Distinct rubrics the items cycle through (criterion texts repeat across their items). */
  rubrics?: number;
  /** Shifts every item's chance of meeting criteria (to make a second, different run). */
  qualityShift?: number;
  /** Share of items whose grading failed. */
  errorRate?: number;
  /** Leave prompts and responses out (as `--no-text`). */
  omitText?: boolean;
}

interface RubricTemplate {
  id: string;
  hash: string;
  criteria: Array<{ text: string; points: number; tags: string[]; source: 'judge' | 'check' }>;
}

function rubricTemplates(count: number, criteriaPerItem: number, seed: number): RubricTemplate[] {
  const random = seededRandom(seed ^ 0x5eed);
  const templates: RubricTemplate[] = [];
  for (let index = 0; index < count; index += 1) {
    const criteria: RubricTemplate['criteria'] = [];
    for (let position = 0; position < criteriaPerItem; position += 1) {
      const penalty = random() < 0.25;
      const points = penalty ? -(1 + randomInteger(random, 8)) : 1 + randomInteger(random, 10);
      const source = random() < 0.1 ? 'check' : 'judge';
      criteria.push({
        text: `${penalty ? 'Fails to' : 'Correctly'} ${sentence(random, 10, 22).toLowerCase()}`,
        points,
        tags: ['level:example', `axis:${axes[randomInteger(random, axes.length)]}`],
        source,
      });
    }
    templates.push({ id: `rubric-${index}`, hash: (0x10000000 + index * 2654435761).toString(16).slice(-12).padStart(12, '0'), criteria });
  }
  return templates;
}

/** One synthetic results record (exported for tests that need records, not a file). */
export function* syntheticResultRecords(options: SyntheticResultsOptions): Generator<ResultRecord> {
  const seed = options.seed ?? 7;
  const random = seededRandom(seed);
  const templates = rubricTemplates(Math.max(1, options.rubrics ?? Math.ceil(options.items / 20)), options.criteriaPerItem, seed);
  const errorRate = options.errorRate ?? 0.005;
  for (let index = 0; index < options.items; index += 1) {
    const template = templates[index % templates.length];
    const quality = Math.min(0.97, Math.max(0.03, 0.35 + 0.5 * random() + (options.qualityShift ?? 0)));
    const failed = random() < errorRate;
    const criteria: GradedCriterion[] = template.criteria.map((criterion, position) => {
      const line: GradedCriterion = {
        id: `c${position}`,
        text: criterion.text,
        points: criterion.points,
        tags: criterion.tags,
        kind: 'principle',
        source: criterion.source,
        status: 'ok',
        met: criterion.points < 0 ? random() > quality + 0.1 : random() < quality,
      };
      if (failed && position === 0) {
        line.status = 'error';
        line.met = null;
        line.error = { code: 'JUDGE_UNPARSEABLE', message: 'no JSON object in the reply after 3 attempts' };
      } else if (criterion.source === 'judge') {
        line.explanation = paragraph(random, 1 + randomInteger(random, 2), 8, 18);
      } else {
        line.explanation = `check ${line.met ? 'passed' : 'failed'}: ${sentence(random, 3, 6)}`;
      }
      return line;
    });
    const turns = random() < 0.3 ? 3 : 1;
    const prompt = [];
    for (let turn = 0; turn < turns; turn += 1) prompt.push({ role: turn % 2 === 0 ? 'user' : 'assistant', content: paragraph(random, 2 + randomInteger(random, 3), 8, 16) });
    const record: ResultRecord = {
      id: `item-${String(index + 1).padStart(5, '0')}`,
      status: failed ? 'error' : 'ok',
      score: null,
      criteria,
      tags: [`theme:${themes[randomInteger(random, themes.length)]}`],
      rubric_id: template.id,
      rubric_hash: template.hash,
      judge: { id: 'openai:gpt-4.1-mini', model: 'gpt-4.1-mini', base_url: 'http://127.0.0.1:8080/v1', template_version: 'per-criterion/1', mode: 'per-criterion', temperature: 0, max_tokens: 1024, verdict: 'binary' },
      scoring: 'healthbench',
      usage: { prompt_tokens: 620 * criteria.length, completion_tokens: 48 * criteria.length, cached_prompt_tokens: 300 * criteria.length, calls: criteria.length, cache_hits: 0, retries: failed ? 2 : 0, gate_calls_saved: 0 },
      line: index + 1,
      rubricate_version: '0.1.0',
    };
    if (!options.omitText) {
      record.prompt = prompt;
      record.response = paragraph(random, 6 + randomInteger(random, 5), 10, 20);
    }
    if (failed) record.error = { code: 'JUDGE_UNPARSEABLE', message: `1 of ${criteria.length} criteria could not be graded; first: no JSON object in the reply after 3 attempts` };
    record.score = healthbenchScoring.itemScore(toScoredItem(record));
    yield record;
  }
}

/** Writes a synthetic results file; returns the number of records. */
export async function writeSyntheticResults(file: string, options: SyntheticResultsOptions): Promise<number> {
  const writer = new JsonLinesWriter(file);
  let count = 0;
  for (const record of syntheticResultRecords(options)) {
    await writer.write(record);
    count += 1;
  }
  await writer.close();
  return count;
}
