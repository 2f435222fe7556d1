// An Angular service and component over the NestJS example's /api/agent/run (examples/nest): the
// run streams into the page as server-sent events, read back by agent-rx/browser as the same cold
// Observable of CliMessages. Type-checked against @angular/core in `npm run typecheck`.
import { Component, DestroyRef, inject, Injectable, signal } from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import type { Observable, Subscription } from 'rxjs';
import { fromAgentEventSource, type CliMessage } from '../../lib/browser.js';

@Injectable({ providedIn: 'root' })
export class AgentService {
  /** Cold: every subscription opens its own EventSource, so the server starts its own run. */
  run(prompt: string): Observable<CliMessage> {
    return fromAgentEventSource(`/api/agent/run?prompt=${encodeURIComponent(prompt)}`);
  }
}

@Component({
  selector: 'app-agent-run',
  template: `
    <button type="button" (click)="start('What does this repo do?')">Run</button>
    <button type="button" (click)="stop()">Stop</button>
    <pre>{{ answer() }}</pre>
    @if (error(); as message) {
      <p role="alert">{{ message }}</p>
    }
  `,
})
export class AgentRunComponent {
  readonly answer = signal('');
  readonly error = signal<string | null>(null);
  private readonly agent = inject(AgentService);
  private readonly destroyRef = inject(DestroyRef);
  private subscription: Subscription | null = null;

  start(prompt: string): void {
    this.stop();
    this.answer.set('');
    this.error.set(null);
    // Text after a tool is the model's next message: a paragraph of its own.
    let afterTool = false;
    // Unsubscribing (Stop, or takeUntilDestroyed when the view goes) closes the EventSource, and the server stops the agent.
    this.subscription = this.agent.run(prompt).pipe(takeUntilDestroyed(this.destroyRef)).subscribe((message) => {
      if (message.type.startsWith('tool.')) afterTool ||= this.answer() !== '';
      if (message.type === 'assistant' && message.text !== '') {
        const gap = afterTool ? '\n\n' : '';
        afterTool = false;
        this.answer.update((text) => text + gap + message.text);
      }
      if (message.type === 'terminal.failed') this.error.set(message.message);
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
  }
}
