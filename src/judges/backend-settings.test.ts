import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { parseRunSpec } from '../spec/run-spec.js';
import { createJudge, registerJudge, unreadSettings } from './registry.js';
import { createScriptedJudge } from './scripted.js';

/** A backend with settings of its own; `built` keeps what each build was given. */
const built: Array<{ target: string; settings: unknown }> = [];
registerJudge('settings-echo', {
  reads: [],
  settings: z.strictObject({ voice: z.enum(['soft', 'loud']).default('soft'), repeat: z.int().positive().optional() }),
  async create({ target, settings }) {
    built.push({ target, settings });
    return createScriptedJudge('met');
  },
});

function refusal(run: () => unknown): RubricateError {
  try {
    run();
  } catch (error) {
    if (RubricateError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('not refused');
}

async function refusalOf(promise: Promise<unknown>): Promise<RubricateError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!RubricateError.isInstance(error)) throw new Error(`not a RubricateError: ${String(error)}`);
  return error;
}

describe("a registered backend's own settings", () => {
  it('reach the backend parsed by its schema (defaults filled in); absent, the backend gets none', async () => {
    built.length = 0;
    await createJudge({ model: 'settings-echo:a', settings: { repeat: 2 } });
    await createJudge({ model: 'settings-echo:b' });
    expect(built).toEqual([
      { target: 'a', settings: { voice: 'soft', repeat: 2 } },
      { target: 'b', settings: undefined },
    ]);
  });

  it('are checked in the same pass as the run spec: an unknown one is refused by name, a wrong value by its path', () => {
    expect(parseRunSpec({ judges: [{ model: 'settings-echo:a', settings: { voice: 'loud' } }] }).judges[0].settings).toEqual({ voice: 'loud' });
    const unknown = refusal(() => parseRunSpec({ judges: [{ model: 'settings-echo:a', settings: { voice: 'loud', pitch: 3 } }] }));
    expect(unknown.code).toBe('CONFIG_INVALID');
    expect(unknown.details.field).toBe('judges.0.settings.pitch');
    expect(unknown.message).toContain('settings.pitch: not a setting');
    const wrong = refusal(() => parseRunSpec({ models: [{ model: 'settings-echo:a', settings: { voice: 'shout' } }] }));
    expect(wrong.details.field).toBe('models.0.settings.voice');
  });

  it('are refused by createJudge before anything is built', async () => {
    built.length = 0;
    const error = await refusalOf(createJudge({ model: 'settings-echo:a', settings: { volume: 11 } }));
    expect(error.details.field).toBe('settings.volume');
    expect(built).toEqual([]);
  });

  it('given to a backend that declares none, are refused as a setting it does not read', async () => {
    expect(unreadSettings({ model: 'scripted:met', settings: { voice: 'loud' } })).toEqual(['settings']);
    expect(unreadSettings({ model: 'settings-echo:a', settings: { voice: 'loud' } })).toEqual([]);
    const error = await refusalOf(createJudge({ model: 'scripted:met', settings: { voice: 'loud' } }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toBe('settings is not read by scripted: judges: leave it out');
  });
});
