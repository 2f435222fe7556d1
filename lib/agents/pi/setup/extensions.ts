import { fileURLToPath } from 'node:url';

/**
 * The folder of agent-rx's permission extension for pi, for `pi --extension`: pi loads its
 * `index.ts` from the sources, its `index.js` from the built `dist/`, whichever this module is
 * part of.
 */
export const PI_PERMISSION_EXTENSION: string = fileURLToPath(new URL('./permission-extension', import.meta.url));
