// Checks of a source's options: a programmer error throws `TypeError` when the source is called.

/** Throws unless `options` is an object; `source` names the function, e.g. `runPi`. */
export function checkOptionsObject(source: string, options: unknown): void {
  if (typeof options !== 'object' || options === null) throw new TypeError(`agent-rx: ${source} needs an options object`);
}

/** Throws unless `prompt` is a string with something besides whitespace. */
export function checkPrompt(source: string, prompt: unknown): void {
  if (typeof prompt !== 'string' || prompt.trim() === '') throw new TypeError(`agent-rx: ${source} needs a non-empty \`prompt\` string`);
}

/** Throws unless `value` is a non-empty string. */
export function checkString(name: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw new TypeError(`agent-rx: ${name} must be a non-empty string`);
}

/** Throws unless each given value (`undefined` skipped) is a non-empty string. */
export function checkStrings(values: Readonly<Record<string, unknown>>): void {
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined) checkString(name, value);
  }
}

/** Throws unless each given value (`undefined` skipped) is an array of strings. */
export function checkStringLists(values: Readonly<Record<string, unknown>>): void {
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && (!Array.isArray(value) || !value.every((item) => typeof item === 'string'))) {
      throw new TypeError(`agent-rx: ${name} must be an array of strings`);
    }
  }
}

/** Throws unless each given value (`undefined` skipped) is a boolean. */
export function checkBooleans(values: Readonly<Record<string, unknown>>): void {
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`agent-rx: ${name} must be a boolean`);
  }
}

/** What a spawn failure's message adds: how to install the agent, or where to point instead. */
export function installHint(displayName: string, npmPackage: string): string {
  return `Install ${displayName} with \`npm install -g ${npmPackage}\`, or pass \`executable\`.`;
}
