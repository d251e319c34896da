import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenAITestServer, RecordedRequest, ScriptedReply } from '@quiver/agent-loop/testing';
import { startOpenAITestServer } from '@quiver/agent-loop/testing';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { exampleTools } from '@quiver/core-registry/examples';
import { z } from 'zod';
import { ExitCode, runCli } from '../src/index.js';
import { captureIO } from './helpers.js';

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part: { text?: string }) => part.text ?? '').join('');
  return '';
}

/** The scripted model: calculates, deletes (a tool needing approval), reports tool results. */
function brain(request: RecordedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as { role: string; content: unknown }[];
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: `The tool said: ${text(last.content)}`, chunkSize: 5 };
  const question = text(last?.content);
  if (/calculate/.test(question))
    return {
      text: 'Let me see. ',
      toolCalls: [{ name: 'calculator', arguments: { expression: '12 * 12' } }],
    };
  if (/delete/.test(question))
    return { toolCalls: [{ name: 'remove_note', arguments: { name: 'notes.txt' } }] };
  return { text: `You said: ${question}` };
}

let model: OpenAITestServer;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  model = await startOpenAITestServer({ script: brain });
  env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test', QUIVER_MODEL: 'test-model' };
});
afterAll(async () => {
  await model?.close();
});

function toolkitWithApproval(): Toolkit {
  const toolkit = new Toolkit();
  for (const tool of exampleTools) toolkit.register(tool);
  toolkit.register(
    defineTool({
      name: 'remove_note',
      description: 'Delete a note',
      parameters: z.object({ name: z.string() }),
      needsApproval: true,
      execute: ({ name }) => `removed ${name}`,
    }),
  );
  return toolkit;
}

describe('quiver chat', () => {
  it('without a model, names the env vars to set and exits 2', async () => {
    const io = captureIO();
    const code = await runCli(['chat', '--message', 'hi'], { io, env: {} });
    expect(code).toBe(ExitCode.usage);
    expect(io.err()).toMatch(/OPENAI_API_KEY/);
    expect(io.err()).toMatch(/OPENAI_BASE_URL/);
    expect(io.err()).toMatch(/QUIVER_MODEL/);
  });

  it('streams the answer and shows the tool call and its result', async () => {
    const io = captureIO();
    const code = await runCli(['chat', '--message', 'Please calculate 12 * 12'], {
      io,
      env,
      createToolkit: toolkitWithApproval,
    });
    expect(code).toBe(ExitCode.ok);
    expect(io.out()).toMatch(/⚙ calculator\(\{"expression":"12 \* 12"\}\)/);
    expect(io.out()).toMatch(/✔ calculator → 144/);
    expect(io.out()).toMatch(/The tool said: 144/);
  });

  it('keeps the conversation across lines and asks before tools that need approval', async () => {
    const io = {
      ...captureIO(),
      stdin: Readable.from([
        'hello there\n',
        'delete my notes\n',
        'y\n',
        'delete it again\n',
        'n\n',
        '/exit\n',
      ]),
    };
    let out = '';
    io.stdout = (chunk: string) => {
      out += chunk;
    };
    const code = await runCli(['chat'], { io, env, createToolkit: toolkitWithApproval });
    expect(code).toBe(ExitCode.ok);
    expect(out).toMatch(/You said: hello there/);
    expect(out).toMatch(/✔ remove_note → removed notes.txt/);
    expect(out).toMatch(/✘ remove_note → The user rejected/);
    // The second question was sent with the first exchange before it.
    const lastRequest = model.requests.at(-1)!.body.messages as { role: string }[];
    expect(lastRequest.filter((message) => message.role === 'user').length).toBeGreaterThanOrEqual(
      3,
    );
  });

  it('prints agent events as JSON lines with --json', async () => {
    const io = captureIO();
    await runCli(['chat', '--message', 'Please calculate 12 * 12', '--json', '--yes'], {
      io,
      env,
      createToolkit: toolkitWithApproval,
    });
    const events = io
      .out()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    expect(events[0]!.type).toBe('run-start');
    expect(events.at(-1)!.type).toBe('run-end');
    expect(events.some((event) => event.type === 'tool-end')).toBe(true);
  });
});
