import type { AgentDefinition } from '../definition.js';
import { piRunInvocation, piSessionInvocation, type PiSetup } from './args.js';
import { piDialect } from './dialect.js';
import { PI_OPTIONS, PI_THINKING_LEVELS, type PiSessionOptions, type RunPiOptions } from './options.js';
import { recognizesPiOutput } from './recognize.js';
import { piNoRetryOverlay } from './setup/settings-overlay.js';
import { choiceFlag, sessionFlag, textFlag } from '../shared/flags.js';

/** pi (`@mariozechner/pi-coding-agent`): `pi --mode json` for runs, `pi --mode rpc` for sessions. */
export const piAgent = {
  name: 'pi',
  displayName: 'pi',
  executable: { names: ['pi'] },
  options: PI_OPTIONS,
  run: piRunInvocation,
  session: piSessionInvocation,
  dialect: piDialect,
  flags: [
    textFlag('provider', 'provider', '<name>', "pi's provider"),
    choiceFlag('thinking', 'thinking', PI_THINKING_LEVELS, '<level>', `pi's thinking level: ${PI_THINKING_LEVELS.join(', ')}`),
    sessionFlag(['new', 'none', 'continue'], 'id', 'pi: new, none, continue or an id'),
  ],
  recognizesOutput: recognizesPiOutput,
  setup: { overlay: (setup) => piNoRetryOverlay(setup.savesSession) },
} satisfies AgentDefinition<'pi', RunPiOptions, PiSessionOptions, PiSetup>;
