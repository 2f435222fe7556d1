import { get, type ClientRequest, type IncomingMessage } from 'node:http';

/** One HTTP request read as a stream of server-sent events, for tests. */
export interface SseRequest {
  readonly request: ClientRequest;
  readonly response: Promise<IncomingMessage>;
  /** The raw body received so far. */
  readonly body: () => string;
  /** The `data` of each complete event so far, parsed as JSON. */
  readonly events: () => unknown[];
  /** Resolves once `count` events have arrived. */
  readonly waitForEvents: (count: number) => Promise<void>;
  /** Resolves once the body received so far satisfies `check` (rejects if the response ends first). */
  readonly waitForBody: (check: (body: string) => boolean) => Promise<void>;
  /** Resolves when the server has ended the response. */
  readonly ended: Promise<void>;
}

export function requestSse(url: string, headers: Readonly<Record<string, string>> = {}): SseRequest {
  let body = '';
  const waiters: (() => void)[] = [];
  let resolveEnded!: () => void;
  const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
  let request!: ClientRequest;
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    request = get(url, { headers }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        for (const wake of waiters.splice(0)) wake();
      });
      res.on('end', resolveEnded);
      resolve(res);
    });
    request.on('error', reject);
  });
  const events = () =>
    body
      .split('\n\n')
      .slice(0, -1)
      .flatMap((frame) => frame.split('\n').filter((line) => line.startsWith('data: ')))
      .map((line) => JSON.parse(line.slice('data: '.length)) as unknown);
  // Waits, chunk by chunk, until the body says what is awaited.
  const waitForBody = async (check: (body: string) => boolean) => {
    while (!check(body)) {
      await new Promise<void>((resolve, reject) => {
        waiters.push(resolve);
        void ended.then(() => {
          reject(new Error(`the response ended before the body was as awaited: ${body}`));
        });
      });
    }
  };
  const waitForEvents = (count: number) => waitForBody(() => events().length >= count);
  return { request, response, body: () => body, events, waitForEvents, waitForBody, ended };
}
