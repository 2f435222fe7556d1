// The page of the useChat example: React and the AI SDK's useChat, talking to /api/chat (server.ts).
// Every part of the agent's answer is shown as it streams: its text, its thinking, and its own
// tools (name, input, output). Stop aborts the request; the server then stops the agent.
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, type UIMessage } from 'ai';
import { useState, type ReactElement, type SyntheticEvent } from 'react';
import { createRoot } from 'react-dom/client';

const transport = new DefaultChatTransport<UIMessage>({ api: '/api/chat' });

function Part({ part }: { readonly part: UIMessage['parts'][number] }): ReactElement | null {
  switch (part.type) {
    case 'text':
      return <p className="text">{part.text}</p>;
    case 'reasoning':
      return (
        <details className="reasoning">
          <summary>thinking</summary>
          {part.text}
        </details>
      );
    case 'dynamic-tool':
      return (
        <div className="tool" data-state={part.state}>
          <b>{part.toolName}</b> <code>{JSON.stringify(part.input)}</code>
          {part.state === 'output-available' ? <pre>{typeof part.output === 'string' ? part.output : JSON.stringify(part.output)}</pre> : null}
          {part.state === 'output-error' ? <pre className="bad">{part.errorText}</pre> : null}
        </div>
      );
    default:
      return null;
  }
}

function Chat(): ReactElement {
  const { messages, sendMessage, status, stop, error } = useChat({ transport });
  const [input, setInput] = useState('');
  const busy = status === 'submitted' || status === 'streaming';
  const send = (event: SyntheticEvent): void => {
    event.preventDefault();
    if (input.trim() === '' || busy) return;
    void sendMessage({ text: input });
    setInput('');
  };
  return (
    <main>
      <h1>
        agent-rx <span>· useChat</span>
      </h1>
      <ol id="messages">
        {messages.map((message) => (
          <li key={message.id} data-role={message.role}>
            {message.parts.map((part, index) => (
              <Part key={index} part={part} />
            ))}
          </li>
        ))}
      </ol>
      {error === undefined ? null : (
        <p id="error" role="alert">
          {error.message}
        </p>
      )}
      <form onSubmit={send}>
        <input
          id="prompt"
          value={input}
          placeholder="Ask the agent"
          onChange={(event) => {
            setInput(event.target.value);
          }}
        />
        <button id="send" type="submit" disabled={busy}>
          Send
        </button>
        <button
          id="stop"
          type="button"
          disabled={!busy}
          onClick={() => {
            void stop();
          }}
        >
          Stop
        </button>
      </form>
      <p id="status" data-status={status}>
        {status}
      </p>
    </main>
  );
}

const root = document.getElementById('root');
if (root !== null) createRoot(root).render(<Chat />);
