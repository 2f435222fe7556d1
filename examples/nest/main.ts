// `npx tsx examples/nest/main.ts`: a NestJS app that serves pi runs and sessions as server-sent
// events under /api/agent (see agent.controller.ts), with the offline replay agent by default.
// SIGTERM, SIGINT or SIGHUP closes the app (enableShutdownHooks): every open run and session ends
// with its terminal message, the HTTP server closes, and the process exits once no agent is left.
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { AgentModule } from './agent.module.js';
import { describePi, parseNestArgs, USAGE, type PiChoice } from './options.js';

const HOST = '127.0.0.1';

/** Starts the app on 127.0.0.1 (`port` 0: any free one) and returns it with its base URL. */
export async function startNestApp(pi: PiChoice, port: number): Promise<{ app: INestApplication; url: string }> {
  const app = await NestFactory.create(AgentModule.forRoot(pi));
  app.setGlobalPrefix('api');
  app.enableShutdownHooks(['SIGTERM', 'SIGINT', 'SIGHUP']);
  await app.listen(port, HOST);
  const address = (app.getHttpServer() as { address(): AddressInfo }).address();
  return { app, url: `http://${HOST}:${String(address.port)}/api/agent/` };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const request = parseNestArgs(process.argv.slice(2), process.env);
  if (request.kind === 'help') {
    process.stdout.write(USAGE);
  } else if (request.kind === 'usage-error') {
    process.stderr.write(`${request.message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    const { url } = await startNestApp(request.pi, request.port);
    process.stdout.write(`agent-rx NestJS example · ${describePi(request.pi)}\n${url}\n`);
    process.stdout.write(`try: curl -N '${url}run?prompt=hello'\n`);
  }
}
