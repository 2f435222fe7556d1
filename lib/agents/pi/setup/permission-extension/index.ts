// A pi extension, not a module of agent-rx: pi loads this folder itself (`pi --extension <folder>`
// finds `index.ts` in the sources, `index.js` in `dist/`) into its own process, where agent-rx is
// not there to import. It imports nothing, and its few types are pi's, written out.
//
// Before each tool call it asks the RPC client (`ctx.ui.confirm`, which pi's RPC mode writes as an
// `extension_ui_request` and answers with the client's `extension_ui_response`) and blocks the call
// unless the answer is yes. The dialog's title marks it as this extension's; its message is the
// call, as JSON: `{ toolCallId, tool, input }`.

/** The title of every dialog of this extension (`PI_PERMISSION_TITLE` of the pi session protocol). */
const TITLE = 'agent-rx permission';

/** pi's `tool_call` event. */
interface ToolCallEvent {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
}

/** What of pi's `ExtensionContext` this uses. */
interface ExtensionContext {
  readonly ui: { confirm(title: string, message: string, options?: { readonly signal?: AbortSignal }): Promise<boolean> };
  /** The running turn's abort signal: an aborted turn's dialog is closed as a no. */
  readonly signal?: AbortSignal | undefined;
}

/** What a `tool_call` handler returns to block the call. */
interface Block {
  readonly block: true;
  readonly reason: string;
}

/** What of pi's `ExtensionAPI` this uses. */
interface ExtensionApi {
  on(event: 'tool_call', handler: (event: ToolCallEvent, ctx: ExtensionContext) => Promise<Block | undefined>): void;
}

/** Asks before every tool call; a no (or a closed dialog) blocks it. */
export default function agentRxPermission(pi: ExtensionApi): void {
  pi.on('tool_call', async (event, ctx) => {
    const call = JSON.stringify({ toolCallId: event.toolCallId, tool: event.toolName, input: event.input ?? null });
    const allowed = await ctx.ui.confirm(TITLE, call, ctx.signal === undefined ? {} : { signal: ctx.signal });
    return allowed ? undefined : { block: true, reason: `Permission denied: this ${event.toolName} call was not allowed, and did not run.` };
  });
}
