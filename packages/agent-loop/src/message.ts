import type { AssistantToolCall, ChatMessage, ContentPart, Role, TextPart } from '@quiver/core';
import { chatMessageSchema, messageText } from '@quiver/core';
import { InvalidMessagesError } from './errors.js';

/**
 * A chat message as a class instance (Qwen-Agent's `Message`): the same fields as the plain
 * OpenAI-shaped {@link ChatMessage}, plus helpers. `Agent.run` accepts either kind and answers in
 * the kind it was given.
 *
 * @example
 * ```ts
 * const question = new Message({ role: 'user', content: 'What is 2 + 2?' });
 * for await (const response of agent.run([question])) console.log(response.at(-1)?.text);
 * ```
 */
export class Message {
  role: Role;
  content: ChatMessage['content'];
  name?: string;
  tool_calls?: AssistantToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;

  /** @param init - a plain chat message (validated) */
  constructor(init: ChatMessage) {
    this.role = init.role;
    this.content = init.content;
    if (init.name !== undefined) this.name = init.name;
    if (init.role === 'assistant') {
      if (init.tool_calls !== undefined) this.tool_calls = init.tool_calls;
      if (init.reasoning_content !== undefined) this.reasoning_content = init.reasoning_content;
    }
    if (init.role === 'tool') this.tool_call_id = init.tool_call_id;
  }

  /** The text of the content (text parts joined; images and files left out). */
  get text(): string {
    return messageText({ content: this.content } as ChatMessage);
  }

  /** The plain, JSON-serialisable message (a deep copy). */
  toJSON(): ChatMessage {
    const plain: Record<string, unknown> = { role: this.role, content: cloneContent(this.content) };
    if (this.name !== undefined) plain.name = this.name;
    if (this.tool_calls !== undefined) plain.tool_calls = this.tool_calls.map(cloneToolCall);
    if (this.tool_call_id !== undefined) plain.tool_call_id = this.tool_call_id;
    if (this.reasoning_content !== undefined) plain.reasoning_content = this.reasoning_content;
    return plain as unknown as ChatMessage;
  }
}

/** What `Agent.run` accepts: plain chat messages or {@link Message} instances. */
export type MessageInput = ChatMessage | Message;

/** The kind of message `Agent.run` answers with for a given input kind. */
export type MessageOutput<TInput> = TInput extends Message ? Message : ChatMessage;

/** @internal Deep-copy and validate the caller's messages; never touches the caller's objects. */
export function normaliseMessages(messages: readonly MessageInput[]): {
  messages: ChatMessage[];
  kind: 'plain' | 'instance';
} {
  if (!Array.isArray(messages)) {
    throw new InvalidMessagesError(0, 'expected an array of messages');
  }
  let kind: 'plain' | 'instance' = 'plain';
  const out: ChatMessage[] = [];
  messages.forEach((message, index) => {
    if (message instanceof Message) {
      kind = 'instance';
      out.push(message.toJSON());
      return;
    }
    const parsed = chatMessageSchema.safeParse(message);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? ` at "${issue.path.join('.')}"` : '';
      throw new InvalidMessagesError(index, `${issue?.message ?? 'invalid'}${where}`);
    }
    // zod returns fresh objects with unknown keys stripped: that is our deep copy.
    out.push(parsed.data as ChatMessage);
  });
  return { messages: out, kind };
}

/** @internal Give the caller messages of the kind it passed in (fresh objects either way). */
export function toOutputMessages(
  messages: readonly ChatMessage[],
  kind: 'plain' | 'instance',
): ChatMessage[] | Message[] {
  return kind === 'instance'
    ? messages.map((message) => new Message(message))
    : messages.map((message) => ({ ...message }));
}

/** @internal Shallow-copy content so later edits of a part do not reach a copy. */
function cloneContent(content: ChatMessage['content']): ChatMessage['content'] {
  if (typeof content === 'string' || content === null) return content;
  return (content as ContentPart[]).map((part) => structuredClone(part)) as TextPart[];
}

function cloneToolCall(call: AssistantToolCall): AssistantToolCall {
  return {
    id: call.id,
    type: 'function',
    function: { name: call.function.name, arguments: call.function.arguments },
  };
}
