import type { RunOverlay } from '../../definition.js';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { asRecord, createConfigOverlay, type SettingsOverlay } from '../../shared/setup/settings-overlay.js';
import { withMcpServers } from '../../acp/mcp-settings.js';

/** The variable Qwen Code reads its configuration folder from, instead of `~/.qwen`. */
export const QWEN_HOME_ENV = 'QWEN_HOME';

/** Qwen Code's configuration folder for an environment: `QWEN_HOME` (`~` for the home), else `<HOME>/.qwen`. */
export function qwenHome(env: Readonly<Record<string, string | undefined>>): string {
  const home = env['HOME'] !== undefined && env['HOME'] !== '' ? env['HOME'] : homedir();
  const configured = env[QWEN_HOME_ENV];
  if (configured === undefined || configured === '') return join(home, '.qwen');
  if (configured === '~') return home;
  return configured.startsWith('~/') ? join(home, configured.slice(2)) : resolve(configured);
}

/** What the overlay's settings make of the user's. */
export interface QwenSettingsPatch {
  /** One try per HTTP request (`model.generationConfig.maxRetries: 0`). */
  readonly noRetries: boolean;
  /**
   * The model takes images (`model.generationConfig.modalities.image: true`, the user's other
   * modalities kept): for an ACP session, whose prompts may carry images. Without it Qwen Code
   * guesses the modalities from the model's id, and for an id it does not know (a custom or local
   * model) it replaces every image of a prompt with the text `[image: image/png]`, silently.
   */
  readonly images?: boolean;
  /** The run's MCP servers in settings.json's form: they replace the user's (`mcpServers`). */
  readonly mcpServers?: Readonly<Record<string, Record<string, unknown>>>;
}

/**
 * A run's settings: the user's, quiet. No update check, usage statistics or telemetry; no
 * background memory agent (after an answer it asks the model again and writes memories: a second
 * request the run waits for and counts); no follow-up suggestions (after each ACP turn a side
 * request, and a stall of a second before the turn's answer); no inhibitor process that keeps the
 * machine awake while a model streams. With `noRetries`, its HTTP client does not retry; with
 * `images`, the model is said to take images; with `mcpServers`, those are its servers (the
 * user's left out).
 */
export function quietSettings(patch: QwenSettingsPatch): (settings: Record<string, unknown>) => Record<string, unknown> {
  return (settings) => {
    const model = asRecord(settings['model']);
    const generationConfig = asRecord(model['generationConfig']);
    const patched = {
      ...generationConfig,
      ...(patch.noRetries ? { maxRetries: 0 } : {}),
      ...(patch.images === true ? { modalities: { ...asRecord(generationConfig['modalities']), image: true } } : {}),
    };
    const served = patch.mcpServers === undefined ? settings : withMcpServers(settings, { ...patch.mcpServers });
    return {
      ...served,
      general: { ...asRecord(settings['general']), enableAutoUpdate: false, preventSystemSleep: false },
      privacy: { ...asRecord(settings['privacy']), usageStatisticsEnabled: false },
      telemetry: { ...asRecord(settings['telemetry']), enabled: false },
      memory: { ...asRecord(settings['memory']), enableManagedAutoMemory: false, enableManagedAutoDream: false },
      ui: { ...asRecord(settings['ui']), enableFollowupSuggestions: false },
      ...(patch.noRetries || patch.images === true ? { model: { ...model, generationConfig: patched } } : {}),
    };
  };
}

/**
 * A per-run configuration folder for Qwen Code (`QWEN_HOME`): the real one with every entry linked
 * (credentials, sessions under `projects/`, memories) except `settings.json`, the user's settings
 * made quiet (see {@link quietSettings}). It is made in `parent`; the user's files are never written.
 */
export function createQwenHomeOverlay(realDir: string, patch: QwenSettingsPatch, parent: string): SettingsOverlay {
  // Sessions are kept under projects/: it exists in the real folder before it is linked.
  return createConfigOverlay({ realDir, patch: quietSettings(patch), ensure: ['projects'], parent, prefix: 'agent-rx-qwen-' });
}

/** The overlay every Qwen Code run and session gets: quiet settings, and with `noRetries` no HTTP retries, with `images` a model that takes images. */
export function qwenSettingsOverlay(patch: QwenSettingsPatch): RunOverlay {
  const more = [...(patch.noRetries ? ['without retries'] : []), ...(patch.images === true ? ['with images'] : []), ...(patch.mcpServers === undefined ? [] : ['with its MCP servers'])];
  return {
    create: (env, parent) => createQwenHomeOverlay(qwenHome(env), patch, parent),
    env: QWEN_HOME_ENV,
    what: `Qwen Code's quiet settings${more.length === 0 ? '' : ` ${more.join(' and ')}`}`,
  };
}
