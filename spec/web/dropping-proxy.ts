import { once } from 'node:events';
import { createServer, request, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A reverse proxy in front of a server, as nginx would be, that can cut its open event streams (a proxy restart, a network change). */
export interface DroppingProxy {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** Destroys the client side of every open event stream; how many it cut. */
  dropStreams(): number;
  close(): Promise<void>;
}

export async function startDroppingProxy(target: string): Promise<DroppingProxy> {
  const upstream = new URL(target);
  const streams = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    // The page's origin is the proxy's: the server is told its own, as a proxy that sets Host does.
    const headers: OutgoingHttpHeaders = { ...req.headers, host: upstream.host };
    if (req.headers.origin !== undefined) headers['origin'] = upstream.origin;
    const forwarded = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders();
      if (String(answer.headers['content-type']).startsWith('text/event-stream')) {
        streams.add(res);
        res.once('close', () => streams.delete(res));
      }
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    res.once('close', () => forwarded.destroy());
    req.pipe(forwarded);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/`,
    dropStreams: () => {
      const open = [...streams];
      for (const res of open) res.socket?.destroy();
      return open.length;
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
