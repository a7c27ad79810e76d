import { describe, expect, expectTypeOf, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { getScoring } from '../scoring/registry.js';
import { getItemImporter } from '../formats/index.js';
import { createJudge } from '../judges/registry.js';
import { runCheck } from '../checks/registry.js';
import { createRegistry, type RegistryName } from './registry.js';

function thrown(action: () => unknown): RubricateError {
  try {
    action();
  } catch (error) {
    if (error instanceof RubricateError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

describe('createRegistry', () => {
  const colours = createRegistry({ what: 'colour', field: 'colour' }, { red: { name: 'red', hex: 'f00' }, green: { name: 'green', hex: '0f0' } });

  it('finds entries by name and types the built-in names', () => {
    expect(colours.get('red').hex).toBe('f00');
    expect(colours.find('blue')).toBeUndefined();
    expect(colours.names()).toEqual(['red', 'green']);
    expectTypeOf<RegistryName<typeof colours>>().toEqualTypeOf<'red' | 'green'>();
    colours.register('blue', { name: 'blue', hex: '00f' });
    expect(colours.has('blue')).toBe(true);
  });

  it('an unknown name is one RubricateError listing the known names, with the nearest for a typo', () => {
    const typo = thrown(() => colours.get('gren'));
    expect(typo.code).toBe('CONFIG_INVALID');
    expect(typo.details.field).toBe('colour');
    expect(typo.message).toBe('unknown colour "gren" (did you mean "green"? known: red, green, blue)');
    expect(thrown(() => colours.get('purple')).message).toBe('unknown colour "purple" (known: red, green, blue)');
    expect(thrown(() => colours.get('paint:red')).message).toContain('did you mean "red"?');
  });

  it('refuses an entry registered under a name that is not its own', () => {
    expect(thrown(() => createRegistry({ what: 'colour', field: 'colour' }, { red: { name: 'green' } })).code).toBe('INTERNAL');
  });

  it('every registry of the project answers an unknown name the same way', async () => {
    expect(thrown(() => getScoring('healthbenc')).message).toMatch(/^unknown scoring "healthbenc" \(did you mean "healthbench"\? known: healthbench, weighted_mean, /);
    expect(thrown(() => getItemImporter('itemz')).message).toMatch(/^unknown input format "itemz" \(did you mean "items"\? known: items, healthbench, /);
    const judge = await createJudge({ model: 'opnai:gpt' }).then(
      () => undefined,
      (error: RubricateError) => error,
    );
    // The built-in backends first; a backend another test file registered in this worker (files
    // share modules here) follows them.
    expect(judge?.message).toMatch(/^unknown judge "opnai:gpt" \(known: openai:…, azure:…, anthropic:…, gemini:…, gguf:…, scripted:…, replay:…, none(, [\w-]+:…)*\)$/);
    const check = thrown(() => runCheck({ type: 'ifeval:punctuation:no_comma' }, 'text', { mode: 'strict', prompt: '' }));
    expect(check.code).toBe('CHECK_INVALID');
    expect(check.message).toMatch(/^unknown check type "ifeval:punctuation:no_comma" \(did you mean "punctuation:no_comma"\? known: /);
  });
});
