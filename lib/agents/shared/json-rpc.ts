/**
 * Parses one line of a JSON-RPC peer (with or without the `jsonrpc` field) and names its kind in
 * `type`, so that the pipeline reads it like any agent's event: a notification's type is its
 * method, a response's is `response`, a request of the peer's is `server-request`. Throws what
 * `JSON.parse` throws; a value that is not an object is returned as it is (and reported invalid by
 * the pipeline).
 *
 * @example
 * // A JSON-RPC agent's output, each line typed by its method (or `response`, `server-request`).
 * lines.pipe(parseJsonLine({ parse: parseJsonRpcLine })).subscribe((item) => {
 *   if (item.kind === 'event') console.log(item.event.type);
 * });
 */
export function parseJsonRpcLine(line: string): unknown {
  const value: unknown = JSON.parse(line);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const message = value as Record<string, unknown>;
  const method = message['method'];
  if (typeof method === 'string') message['type'] = 'id' in message ? 'server-request' : method;
  else if ('id' in message) message['type'] = 'response';
  return message;
}

/** A message as its peer sent it: without the `type` that `parseJsonRpcLine` added. */
export function withoutType(event: { readonly type: string; readonly [key: string]: unknown }): Record<string, unknown> {
  const { type: _type, ...message } = event;
  return message;
}

/**
 * What a JSON-RPC error says: its `message`, with what its `data` adds (a text, or `data.details`,
 * where an agent puts the cause of an `Internal error`), or `undefined` when it has no message.
 *
 * @example
 * rpcErrorText({ code: -32603, message: 'Internal error', data: { details: '401 invalid api key' } }); // 'Internal error: 401 invalid api key'
 */
export function rpcErrorText(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { message, data } = error as { readonly message?: unknown; readonly data?: unknown };
  if (typeof message !== 'string') return undefined;
  const details = typeof data === 'string' ? data : typeof data === 'object' && data !== null ? (data as { readonly details?: unknown }).details : undefined;
  return typeof details === 'string' && details !== '' && details !== message ? `${message}: ${details}` : message;
}
