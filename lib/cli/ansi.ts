/** Functions that wrap text in one ANSI style each, or return it unchanged when colour is off. */
export interface Palette {
  readonly bold: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly red: (text: string) => string;
  readonly green: (text: string) => string;
  readonly yellow: (text: string) => string;
  readonly cyan: (text: string) => string;
}

// A pipe or a file has no `isTTY` at run time, whatever the typings say.
export function isTerminalStream(stream: { readonly isTTY?: boolean }): boolean {
  return stream.isTTY === true;
}

// Colour only on a terminal, and never when NO_COLOR is set to something (https://no-color.org).
export function colorEnabled(stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return isTerminalStream(stream) && (env['NO_COLOR'] ?? '') === '';
}

export function palette(color: boolean): Palette {
  const style = (open: number, close: number) => (text: string) =>
    color && text !== '' ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    bold: style(1, 22),
    dim: style(2, 22),
    red: style(31, 39),
    green: style(32, 39),
    yellow: style(33, 39),
    cyan: style(36, 39),
  };
}
