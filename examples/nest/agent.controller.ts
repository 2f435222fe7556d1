import {
  BadRequestException,
  Body,
  ConflictException,
  Controller,
  Delete,
  Headers,
  HttpCode,
  HttpException,
  HttpStatus,
  Inject,
  NotFoundException,
  Param,
  Post,
  Query,
  Sse,
  type MessageEvent,
} from '@nestjs/common';
import { map, type Observable } from 'rxjs';
import type { SessionCommand } from '../../lib/index.js';
import { AgentService } from './agent.service.js';

const SESSION_ID = /^[\w-]{1,64}$/;

/**
 * `@Sse()` takes the Observable as it is: Nest subscribes per request, writes each `{ data }` as
 * an event (objects as JSON), ends the response when the Observable completes (a run completes
 * right after its terminal message), and unsubscribes when the client disconnects, which stops
 * the agent.
 */
@Controller('agent')
export class AgentController {
  readonly #agent: AgentService;

  // An explicit token: tsx (esbuild) does not emit decorator metadata, so Nest cannot read the parameter's type.
  constructor(@Inject(AgentService) agent: AgentService) {
    this.#agent = agent;
  }

  /** `GET /agent/run?prompt=…`: one run as server-sent events. */
  @Sse('run')
  run(@Query('prompt') prompt: unknown, @Headers('last-event-id') lastEventId?: string): Observable<MessageEvent> {
    // An EventSource reconnecting: starting the run again would repeat its work; 204 stops it for good.
    if (lastEventId !== undefined) throw new HttpException('a run cannot be resumed', HttpStatus.NO_CONTENT);
    if (typeof prompt !== 'string' || prompt.trim() === '') throw new BadRequestException('the prompt is empty'); // runPi would throw a TypeError
    return this.#agent.run(prompt).pipe(map((message) => ({ data: message })));
  }

  /** `GET /agent/session/:id`: starts the session (one agent process) and streams it until it ends or the client leaves. */
  @Sse('session/:id')
  session(@Param('id') id: string, @Headers('last-event-id') lastEventId?: string): Observable<MessageEvent> {
    if (lastEventId !== undefined) throw new HttpException('a session cannot be resumed', HttpStatus.NO_CONTENT);
    checkId(id);
    if (this.#agent.hasSession(id)) throw new ConflictException(`the session ${id} already has its stream`);
    return this.#agent.session(id).pipe(map((message) => ({ data: message })));
  }

  /** `POST /agent/session/:id/prompt` `{ "text": "…" }`: a turn, queued while one runs; `"as": "steer"` or `"follow-up"` for the others. */
  @Post('session/:id/prompt')
  @HttpCode(HttpStatus.ACCEPTED)
  prompt(@Param('id') id: string, @Body() body: unknown): void {
    this.#send(id, promptCommand(body));
  }

  /** `POST /agent/session/:id/abort`: ends the running turn; the process stays for the next one. */
  @Post('session/:id/abort')
  @HttpCode(HttpStatus.ACCEPTED)
  abort(@Param('id') id: string): void {
    this.#send(id, { type: 'abort' });
  }

  /** `DELETE /agent/session/:id`: ends the session after its running turn; its stream ends with the terminal message. */
  @Delete('session/:id')
  @HttpCode(HttpStatus.ACCEPTED)
  end(@Param('id') id: string): void {
    if (!this.#agent.end(id)) throw new NotFoundException(`no session ${id} is open`);
  }

  #send(id: string, command: SessionCommand): void {
    if (!this.#agent.send(id, command)) throw new NotFoundException(`no session ${id} is open: open its event stream first`);
  }
}

function checkId(id: string): void {
  if (!SESSION_ID.test(id)) throw new BadRequestException('a session id is 1 to 64 letters, digits, _ or -');
}

// The command a posted body asks for; a bad body is the client's error.
function promptCommand(body: unknown): SessionCommand {
  const { text, as = 'prompt' } = typeof body === 'object' && body !== null ? (body as { text?: unknown; as?: unknown }) : {};
  if (typeof text !== 'string' || text.trim() === '') throw new BadRequestException('the body needs a non-empty "text"');
  if (as !== 'prompt' && as !== 'steer' && as !== 'follow-up') throw new BadRequestException('"as" is "prompt", "steer" or "follow-up"');
  return { type: as, text };
}
