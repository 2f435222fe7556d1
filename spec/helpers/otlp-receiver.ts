import { createServer, type Server } from 'node:http';

/** A span as an OTLP/JSON export carries it, with the service that sent it. */
export interface ReceivedSpan {
  readonly service: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
}

/** A log record as an OTLP/JSON export carries it. */
export interface ReceivedLog {
  readonly service: string;
  readonly traceId: string;
  readonly body: string;
}

/** A small OTLP/HTTP receiver on 127.0.0.1 (JSON bodies): what the telemetry specs export to. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the OTLP endpoint (signals at `/v1/traces`, `/v1/logs`, `/v1/metrics`). */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  readonly logs: ReceivedLog[];
  /** Requests by path, with their content type (a protobuf body is counted, not read). */
  readonly requests: { readonly path: string; readonly contentType: string }[];
  close(): Promise<void>;
}

type Resource = { resource?: { attributes?: { key: string; value: { stringValue?: string } }[] } };
const serviceOf = (entry: Resource): string => entry.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '';

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const logs: ReceivedLog[] = [];
  const requests: { path: string; contentType: string }[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      const contentType = request.headers['content-type'] ?? '';
      requests.push({ path, contentType });
      if (contentType.includes('json')) {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            resourceSpans?: (Resource & { scopeSpans?: { spans?: { name: string; traceId: string; spanId: string; parentSpanId?: string }[] }[] })[];
            resourceLogs?: (Resource & { scopeLogs?: { logRecords?: { traceId?: string; body?: { stringValue?: string } }[] }[] })[];
          };
          for (const resource of body.resourceSpans ?? []) {
            for (const scope of resource.scopeSpans ?? []) {
              for (const span of scope.spans ?? []) spans.push({ service: serviceOf(resource), name: span.name, traceId: span.traceId.toLowerCase(), spanId: span.spanId.toLowerCase(), parentSpanId: (span.parentSpanId ?? '').toLowerCase() });
            }
          }
          for (const resource of body.resourceLogs ?? []) {
            for (const scope of resource.scopeLogs ?? []) {
              for (const log of scope.logRecords ?? []) logs.push({ service: serviceOf(resource), traceId: (log.traceId ?? '').toLowerCase(), body: log.body?.stringValue ?? '' });
            }
          }
        } catch {
          // Not JSON after all: counted among the requests only.
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    logs,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
