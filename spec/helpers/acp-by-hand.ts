import { acpClientProtocol, type AcpProtocolOptions } from '../../lib/agents/acp/client.js';
import type { ProtocolReaction } from '../../lib/operators/session-protocol.js';

/**
 * An ACP client protocol driven by hand: its lines go to `written`, its reactions to `reactions`,
 * and `answer(method, result)` answers the request it wrote for `method`, each step given a turn
 * of the event loop (`settle`), as the SDK under it takes one. `options` are the protocol's besides its name and cwd.
 */
export function acpByHand(options: Partial<AcpProtocolOptions> = {}) {
  const protocol = acpClientProtocol({ name: 'Agent', cwd: '/w', ...options });
  const state = protocol.createState();
  const written: Record<string, unknown>[] = [];
  const reactions: ProtocolReaction[] = [];
  protocol.open(state, { write: (line) => written.push(line as Record<string, unknown>), react: (reaction) => reactions.push(reaction) });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  const answer = async (method: string, result: unknown) => {
    await settle();
    const request = written.find((message) => message['method'] === method);
    protocol.read(state, { type: 'response', jsonrpc: '2.0', id: request?.['id'], result });
    await settle();
  };
  return { protocol, state, written, reactions, settle, answer };
}
