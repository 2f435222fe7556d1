import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSettingsOverlay, piAgentDir, withoutRetries } from '../../../lib/agents/pi/setup/settings-overlay.js';

const made: string[] = [];
function realDir(settings?: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-rx-real-'));
  made.push(dir);
  writeFileSync(join(dir, 'models.json'), '{"providers":{}}');
  writeFileSync(join(dir, 'auth.json'), '{"secret":true}');
  mkdirSync(join(dir, 'sessions', '--project--'), { recursive: true });
  writeFileSync(join(dir, 'sessions', '--project--', 'one.jsonl'), 'session\n');
  if (settings !== undefined) writeFileSync(join(dir, 'settings.json'), JSON.stringify(settings));
  return dir;
}

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('pi settings overlay', () => {
  it('links every entry of the real directory and merges the patch over its settings', () => {
    const real = realDir({ defaultModel: 'm', retry: { maxRetries: 7, provider: { timeoutMs: 10 } } });
    const overlay = createSettingsOverlay(real, withoutRetries, true);
    made.push(overlay.dir);
    expect(readdirSync(overlay.dir).sort()).toEqual(['auth.json', 'models.json', 'sessions', 'settings.json']);
    expect(lstatSync(join(overlay.dir, 'sessions')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(overlay.dir, 'sessions', '--project--', 'one.jsonl'), 'utf8')).toBe('session\n');
    expect(JSON.parse(readFileSync(join(overlay.dir, 'settings.json'), 'utf8'))).toEqual({
      defaultModel: 'm',
      retry: { maxRetries: 7, enabled: false, provider: { timeoutMs: 10, maxRetries: 0 } },
    });
  });

  it('is removed without touching the real directory it links to', () => {
    const real = realDir({ retry: { enabled: true } });
    const overlay = createSettingsOverlay(real, withoutRetries, true);
    overlay.remove();
    overlay.remove();
    expect(existsSync(overlay.dir)).toBe(false);
    expect(readdirSync(real).sort()).toEqual(['auth.json', 'models.json', 'sessions', 'settings.json']);
    expect(readFileSync(join(real, 'sessions', '--project--', 'one.jsonl'), 'utf8')).toBe('session\n');
    expect(JSON.parse(readFileSync(join(real, 'settings.json'), 'utf8'))).toEqual({ retry: { enabled: true } });
  });

  it('works for a real directory that does not exist yet, creating only its sessions folder when sessions are kept', () => {
    const parent = mkdtempSync(join(tmpdir(), 'agent-rx-real-'));
    made.push(parent);
    const missing = join(parent, 'agent');
    const overlay = createSettingsOverlay(missing, withoutRetries, false);
    made.push(overlay.dir);
    expect(existsSync(missing)).toBe(false);
    expect(readdirSync(overlay.dir)).toEqual(['settings.json']);
    const keeping = createSettingsOverlay(missing, withoutRetries, true);
    made.push(keeping.dir);
    expect(readdirSync(missing)).toEqual(['sessions']);
  });

  it('throws (and leaves nothing behind) when the real settings are not valid JSON', () => {
    const real = realDir();
    writeFileSync(join(real, 'settings.json'), '{ nope');
    const before = readdirSync(tmpdir()).filter((name) => name.startsWith('agent-rx-pi-')).length;
    expect(() => createSettingsOverlay(real, withoutRetries, true)).toThrow(SyntaxError);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('agent-rx-pi-')).length).toBe(before);
  });

  it('finds pi\'s configuration directory like pi does', () => {
    expect(piAgentDir({})).toBe(join(homedir(), '.pi', 'agent'));
    expect(piAgentDir({ PI_CODING_AGENT_DIR: '~/custom' })).toBe(join(homedir(), 'custom'));
    expect(piAgentDir({ PI_CODING_AGENT_DIR: '/etc/pi' })).toBe('/etc/pi');
  });
});
