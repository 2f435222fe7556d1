/** One server-sent event as it was on the wire: its fields (a comment frame has none). */
export interface SseFrame {
  readonly id?: string;
  readonly event?: string;
  readonly retry?: string;
  readonly data?: string;
}

/** The complete frames of a body (an unfinished last one is left out), keep-alive comments dropped. */
export function sseFrames(body: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const text of body.split('\n\n').slice(0, -1)) {
    const fields: Record<string, string> = {};
    for (const line of text.split('\n')) {
      if (line.startsWith(':')) continue;
      const at = line.indexOf(': ');
      if (at === -1) continue;
      const name = line.slice(0, at);
      const value = line.slice(at + 2);
      fields[name] = name === 'data' && fields[name] !== undefined ? `${fields[name]}\n${value}` : value;
    }
    if (Object.keys(fields).length > 0) frames.push(fields);
  }
  return frames;
}

/** The data of the `message` events (no `event:` field), parsed as JSON. */
export function messagesOf(frames: readonly SseFrame[]): unknown[] {
  return frames.filter((frame) => frame.event === undefined && frame.data !== undefined).map((frame) => JSON.parse(frame.data ?? '') as unknown);
}

/** The last `id:` of the frames, as a browser keeps it. */
export function lastIdOf(frames: readonly SseFrame[]): string | undefined {
  return frames.findLast((frame) => frame.id !== undefined)?.id;
}
