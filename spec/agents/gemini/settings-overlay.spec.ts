import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGeminiHomeOverlay, GEMINI_HOME_ENV, geminiHome, withoutRetries } from '../../../lib/agents/gemini/setup/settings-overlay.js';

const made: string[] = [];
const scratch = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};

/** A home whose .gemini holds settings (when given), credentials and a session of a project. */
function realHome(settings?: object): string {
  const home = scratch('agent-rx-gemini-real-');
  const dir = join(home, '.gemini');
  mkdirSync(join(dir, 'tmp', 'project-hash', 'chats'), { recursive: true });
  writeFileSync(join(dir, 'tmp', 'project-hash', 'chats', 'session.json'), '{"messages":[]}');
  writeFileSync(join(dir, 'oauth_creds.json'), '{"token":"secret"}');
  writeFileSync(join(dir, 'trustedFolders.json'), '{}');
  if (settings !== undefined) writeFileSync(join(dir, 'settings.json'), JSON.stringify(settings));
  return home;
}

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('Gemini CLI home overlay', () => {
  it('is a home whose .gemini links every entry of the real one, and whose settings.json is the user\'s with maxAttempts 1 merged over them', () => {
    const home = realHome({ general: { vimMode: true, maxAttempts: 10 }, model: { name: 'gemini-2.5-pro' } });
    const parent = scratch('agent-rx-parent-');
    const overlay = createGeminiHomeOverlay(home, withoutRetries, parent);
    expect(overlay.dir.startsWith(join(parent, 'agent-rx-gemini-'))).toBe(true);
    expect(readdirSync(overlay.dir)).toEqual(['.gemini']);
    const dir = join(overlay.dir, '.gemini');
    expect(readdirSync(dir).sort()).toEqual(['oauth_creds.json', 'settings.json', 'tmp', 'trustedFolders.json']);
    for (const entry of ['oauth_creds.json', 'tmp', 'trustedFolders.json']) {
      expect(lstatSync(join(dir, entry)).isSymbolicLink()).toBe(true);
      expect(readlinkSync(join(dir, entry))).toBe(join(home, '.gemini', entry));
    }
    expect(lstatSync(join(dir, 'settings.json')).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(dir, 'tmp', 'project-hash', 'chats', 'session.json'), 'utf8')).toBe('{"messages":[]}');
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8'))).toEqual({ general: { vimMode: true, maxAttempts: 1 }, model: { name: 'gemini-2.5-pro' } });
  });

  it('what Gemini CLI writes into a linked folder (its sessions under tmp) lands in the real home', () => {
    const home = realHome({});
    const overlay = createGeminiHomeOverlay(home, withoutRetries, scratch('agent-rx-parent-'));
    writeFileSync(join(overlay.dir, '.gemini', 'tmp', 'project-hash', 'chats', 'new.json'), 'new');
    overlay.remove();
    expect(readFileSync(join(home, '.gemini', 'tmp', 'project-hash', 'chats', 'new.json'), 'utf8')).toBe('new');
  });

  it('is removed, more than once if need be, without touching the real home it links to', () => {
    const home = realHome({ general: { maxAttempts: 3 } });
    const overlay = createGeminiHomeOverlay(home, withoutRetries, scratch('agent-rx-parent-'));
    overlay.remove();
    overlay.remove();
    expect(existsSync(overlay.dir)).toBe(false);
    expect(readdirSync(join(home, '.gemini')).sort()).toEqual(['oauth_creds.json', 'settings.json', 'tmp', 'trustedFolders.json']);
    expect(readFileSync(join(home, '.gemini', 'oauth_creds.json'), 'utf8')).toBe('{"token":"secret"}');
    expect(readFileSync(join(home, '.gemini', 'tmp', 'project-hash', 'chats', 'session.json'), 'utf8')).toBe('{"messages":[]}');
    expect(JSON.parse(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8'))).toEqual({ general: { maxAttempts: 3 } });
  });

  it('for a home without .gemini: the real .gemini/tmp is made first (so that sessions are kept), and the settings are only maxAttempts 1', () => {
    const home = scratch('agent-rx-gemini-bare-');
    const overlay = createGeminiHomeOverlay(home, withoutRetries, scratch('agent-rx-parent-'));
    expect(readdirSync(join(home, '.gemini'))).toEqual(['tmp']);
    expect(readdirSync(join(overlay.dir, '.gemini')).sort()).toEqual(['settings.json', 'tmp']);
    expect(JSON.parse(readFileSync(join(overlay.dir, '.gemini', 'settings.json'), 'utf8'))).toEqual({ general: { maxAttempts: 1 } });
  });

  it('throws, and leaves nothing behind, when the user\'s settings are not valid JSON', () => {
    const home = realHome();
    writeFileSync(join(home, '.gemini', 'settings.json'), '{ nope');
    const parent = scratch('agent-rx-parent-');
    expect(() => createGeminiHomeOverlay(home, withoutRetries, parent)).toThrow(SyntaxError);
    expect(readdirSync(parent)).toEqual([]);
  });

  it('settings that are JSON but not an object are read as none', () => {
    const home = realHome();
    writeFileSync(join(home, '.gemini', 'settings.json'), '[1, 2]');
    const overlay = createGeminiHomeOverlay(home, withoutRetries, scratch('agent-rx-parent-'));
    expect(JSON.parse(readFileSync(join(overlay.dir, '.gemini', 'settings.json'), 'utf8'))).toEqual({ general: { maxAttempts: 1 } });
  });
});

describe('Gemini CLI settings and home', () => {
  it('withoutRetries sets general.maxAttempts to 1 and keeps everything else', () => {
    expect(withoutRetries({})).toEqual({ general: { maxAttempts: 1 } });
    expect(withoutRetries({ general: { maxAttempts: 5, checkpointing: { enabled: true } }, ui: { theme: 'x' } })).toEqual({
      general: { maxAttempts: 1, checkpointing: { enabled: true } },
      ui: { theme: 'x' },
    });
    // A `general` that is not an object is replaced.
    expect(withoutRetries({ general: 'odd' })).toEqual({ general: { maxAttempts: 1 } });
    expect(withoutRetries({ general: [1] })).toEqual({ general: { maxAttempts: 1 } });
    // The input is not changed.
    const settings = { general: { maxAttempts: 5 } };
    withoutRetries(settings);
    expect(settings).toEqual({ general: { maxAttempts: 5 } });
  });

  it('finds the home as Gemini CLI does: GEMINI_CLI_HOME, else HOME, else this user\'s home', () => {
    expect(GEMINI_HOME_ENV).toBe('GEMINI_CLI_HOME');
    expect(geminiHome({ GEMINI_CLI_HOME: '/g', HOME: '/h' })).toBe('/g');
    expect(geminiHome({ GEMINI_CLI_HOME: '', HOME: '/h' })).toBe('/h');
    expect(geminiHome({ GEMINI_CLI_HOME: undefined, HOME: '/h' })).toBe('/h');
    expect(geminiHome({ HOME: '' })).toBe(homedir());
    expect(geminiHome({})).toBe(homedir());
  });
});
