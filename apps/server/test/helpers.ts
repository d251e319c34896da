import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedRequest, ScriptedReply } from '@quiver/agent-loop/testing';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import { exampleTools } from '@quiver/core-registry/examples';
import type { RunningServer, ServerOptions, ServerServices } from '../src/index.js';
import { startServer } from '../src/index.js';

/** A toolkit with the example tools. */
export function exampleToolkit(): Toolkit {
  const toolkit = new Toolkit();
  for (const tool of exampleTools) toolkit.register(tool);
  return toolkit;
}

/** Start a server on a free port of 127.0.0.1 with the example tools (or the given services). */
export async function startTestServer(
  services: Partial<ServerServices> = {},
  options: ServerOptions = {},
): Promise<RunningServer & { toolkit: Toolkit }> {
  const toolkit = services.toolkit ?? exampleToolkit();
  const server = await startServer(
    { ...services, toolkit },
    { port: 0, uploadDir: mkdtempSync(join(tmpdir(), 'quiver-server-test-')), ...options },
  );
  return Object.assign(server, { toolkit });
}

/** Read a server-sent event stream into [event, data] pairs. */
export async function readEvents(response: Response): Promise<{ event: string; data: any }[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      return { event, data: data.length ? JSON.parse(data.join('\n')) : undefined };
    });
}

/** What `watch_forever` (a tool that streams until stopped) saw: set when its signal aborts. */
export const watchForever = { started: 0, aborted: 0 };

/**
 * A toolkit with the example tools plus `remove_note`, which needs the user's approval, and
 * `watch_forever`, which streams until it is stopped.
 */
export function chatToolkit(): Toolkit {
  const toolkit = exampleToolkit();
  toolkit.register(
    defineTool({
      name: 'watch_forever',
      description: 'Streams a tick every few milliseconds until stopped',
      parameters: z.object({}),
      async *execute(_args, context) {
        watchForever.started += 1;
        context.signal.addEventListener('abort', () => (watchForever.aborted += 1), { once: true });
        for (let tick = 0; !context.signal.aborted; tick++) {
          yield `tick ${tick}\n`;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      },
    }),
  );
  toolkit.register(
    defineTool({
      name: 'remove_note',
      description: { en: 'Delete a note', zh: '删除笔记' },
      parameters: z.object({ name: z.string() }),
      needsApproval: true,
      flags: { sideEffects: true },
      execute: ({ name }) => `removed ${name}`,
    }),
  );
  return toolkit;
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part: { text?: string }) => part.text ?? '').join('');
  return '';
}

/**
 * What the scripted model of the chat tests answers (for agent-loop's OpenAI test server): it
 * calls `calculator` when asked to calculate, `remove_note` when asked to delete, quotes the
 * knowledge in its system message when asked about a document, and reports tool results.
 */
export function scriptedBrain(request: RecordedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as { role: string; content: unknown }[];
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: `The tool said: ${text(last.content)}`, chunkSize: 6 };
  const question = text(last?.content).toLowerCase();
  if (question.includes('calculate'))
    return {
      text: 'Let me calculate. ',
      toolCalls: [{ name: 'calculator', arguments: { expression: '12 * 12' } }],
    };
  if (question.includes('forever'))
    return { toolCalls: [{ name: 'watch_forever', arguments: {} }] };
  if (question.includes('delete'))
    return { toolCalls: [{ name: 'remove_note', arguments: { name: 'notes.txt' } }] };
  if (question.includes('document')) {
    const system = text(messages.find((message) => message.role === 'system')?.content);
    const line = system
      .split('\n')
      .find((entry) => /quokka|kiwi/i.test(entry) && !entry.startsWith('#'));
    return { text: line ? `From the document: ${line.trim()}` : 'I found nothing in the files.' };
  }
  return { text: 'Hello! Ask me to calculate something.', chunkSize: 4 };
}
