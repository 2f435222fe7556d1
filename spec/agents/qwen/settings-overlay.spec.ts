import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQwenHomeOverlay, qwenHome, qwenSettingsOverlay, QWEN_HOME_ENV } from '../../../lib/agents/qwen/setup/settings-overlay.js';

const made: string[] = [];
const scratch = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};

/** A real `.qwen` holding settings (when given), credentials and a session of a project. */
function realQwen(settings?: object): string {
  const dir = join(scratch('agent-rx-qwen-real-'), '.qwen');
  mkdirSync(join(dir, 'projects', '-work', 'chats'), { recursive: true });
  writeFileSync(join(dir, 'projects', '-work', 'chats', 'session.jsonl'), '{}\n');
  writeFileSync(join(dir, 'oauth_creds.json'), '{"token":"secret"}');
  if (settings !== undefined) writeFileSync(join(dir, 'settings.json'), JSON.stringify(settings));
  return dir;
}

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('Qwen Code configuration overlay (QWEN_HOME)', () => {
  it("links every entry of the real folder and writes the user's settings made quiet; the real settings stay as they were", () => {
    const real = realQwen({ security: { auth: { selectedType: 'openai' } }, memory: { other: 1 }, model: { name: 'm' } });
    const before = readFileSync(join(real, 'settings.json'), 'utf8');
    const overlay = createQwenHomeOverlay(real, { noRetries: false }, scratch('agent-rx-qwen-parent-'));
    expect(readdirSync(overlay.dir).sort()).toEqual(['oauth_creds.json', 'projects', 'settings.json']);
    expect(lstatSync(join(overlay.dir, 'projects')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(join(overlay.dir, 'settings.json'), 'utf8'))).toEqual({
      security: { auth: { selectedType: 'openai' } },
      model: { name: 'm' },
      general: { enableAutoUpdate: false, preventSystemSleep: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      memory: { other: 1, enableManagedAutoMemory: false, enableManagedAutoDream: false },
      ui: { enableFollowupSuggestions: false },
    });
    expect(readFileSync(join(real, 'settings.json'), 'utf8')).toBe(before);
    overlay.remove();
    expect(existsSync(overlay.dir)).toBe(false);
    expect(existsSync(join(real, 'oauth_creds.json'))).toBe(true);
    expect(existsSync(join(real, 'projects', '-work', 'chats', 'session.jsonl'))).toBe(true);
  });

  it('without retries: its HTTP client does not retry (model.generationConfig.maxRetries 0), the rest of the model settings kept', () => {
    const real = realQwen({ model: { name: 'm', generationConfig: { timeout: 5 } } });
    const overlay = createQwenHomeOverlay(real, { noRetries: true }, scratch('agent-rx-qwen-parent-'));
    const settings = JSON.parse(readFileSync(join(overlay.dir, 'settings.json'), 'utf8')) as { model: unknown };
    expect(settings.model).toEqual({ name: 'm', generationConfig: { timeout: 5, maxRetries: 0 } });
    overlay.remove();
  });

  it("with images (an ACP session): the model takes images (modalities.image), the user's other modalities and model settings kept", () => {
    const real = realQwen({ model: { name: 'm', generationConfig: { timeout: 5, modalities: { video: true, image: false } } } });
    const overlay = createQwenHomeOverlay(real, { noRetries: true, images: true }, scratch('agent-rx-qwen-parent-'));
    const settings = JSON.parse(readFileSync(join(overlay.dir, 'settings.json'), 'utf8')) as { model: unknown };
    expect(settings.model).toEqual({ name: 'm', generationConfig: { timeout: 5, maxRetries: 0, modalities: { video: true, image: true } } });
    overlay.remove();
    const plain = createQwenHomeOverlay(realQwen(), { noRetries: false, images: true }, scratch('agent-rx-qwen-parent-'));
    expect((JSON.parse(readFileSync(join(plain.dir, 'settings.json'), 'utf8')) as { model: unknown }).model).toEqual({ generationConfig: { modalities: { image: true } } });
    plain.remove();
    expect(qwenSettingsOverlay({ noRetries: true, images: true }).what).toBe("Qwen Code's quiet settings without retries and with images");
  });

  it('a user without a .qwen folder: the overlay has the quiet settings and a projects folder made in the real one, for sessions', () => {
    const home = scratch('agent-rx-qwen-home-');
    const overlay = qwenSettingsOverlay({ noRetries: false }).create({ HOME: home }, scratch('agent-rx-qwen-parent-'));
    expect(existsSync(join(home, '.qwen', 'projects'))).toBe(true);
    expect(JSON.parse(readFileSync(join(overlay.dir, 'settings.json'), 'utf8'))).toMatchObject({ telemetry: { enabled: false } });
    overlay.remove();
  });

  it('finds the real folder as Qwen Code does: QWEN_HOME (with ~), else HOME/.qwen', () => {
    expect(QWEN_HOME_ENV).toBe('QWEN_HOME');
    expect(qwenHome({ HOME: '/h' })).toBe('/h/.qwen');
    expect(qwenHome({ HOME: '/h', QWEN_HOME: '/q' })).toBe('/q');
    expect(qwenHome({ HOME: '/h', QWEN_HOME: '~/conf/qwen' })).toBe('/h/conf/qwen');
    expect(qwenHome({ HOME: '/h', QWEN_HOME: '~' })).toBe('/h');
    expect(qwenHome({})).toBe(join(homedir(), '.qwen'));
  });
});
