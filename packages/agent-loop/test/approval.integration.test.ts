import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChatMessage, ToolMessage } from '@quiver/core';
import { defineTool } from '@quiver/core-registry';
import type { AgentEvent } from '../src/agent-events.js';
import { ApprovalPendingError, InvalidRunStateError } from '../src/errors.js';
import { FnCallAgent } from '../src/fn-call-agent.js';
import { OpenAIChatModel } from '../src/openai-chat-model.js';
import { RunState } from '../src/run-state.js';
import type { OpenAITestServer } from '../src/testing.js';
import { startOpenAITestServer } from '../src/testing.js';

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function makeAgent(executed: string[]) {
  const sendEmail = defineTool({
    name: 'send_email',
    description: 'Send an email',
    parameters: {
      type: 'object',
      properties: { to: { type: 'string' }, body: { type: 'string' } },
      required: ['to', 'body'],
    },
    needsApproval: true,
    flags: { sideEffects: true },
    execute: ({ to }: { to: string }) => {
      executed.push(`email:${to}`);
      return `sent to ${to}`;
    },
  });
  const deleteFile = defineTool({
    name: 'delete_file',
    description: 'Delete a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    // Only files outside /tmp need a human.
    needsApproval: ({ path }: { path: string }) => !path.startsWith('/tmp/'),
    execute: ({ path }: { path: string }) => {
      executed.push(`delete:${path}`);
      return `deleted ${path}`;
    },
  });
  const model = new OpenAIChatModel({
    baseURL: server!.baseURL,
    apiKey: 'k',
    model: 'test-model',
    retry: { maxRetries: 0 },
  });
  return new FnCallAgent({ model, tools: [sendEmail, deleteFile], name: 'ops' });
}

const ask: ChatMessage[] = [{ role: 'user', content: 'Email Ann and clean up.' }];

describe('human approval', () => {
  it('pauses before tools that need approval, and resumes in a fresh agent from serialised state', async () => {
    server = await startOpenAITestServer({
      script: [
        {
          toolCalls: [
            { id: 'a1', name: 'send_email', arguments: { to: 'ann@example.com', body: 'Hi' } },
            { id: 'a2', name: 'delete_file', arguments: { path: '/tmp/scratch' } },
            { id: 'a3', name: 'delete_file', arguments: { path: '/home/ann/thesis.pdf' } },
          ],
        },
        { text: 'Emailed Ann and removed the scratch file; I left your thesis alone.' },
      ],
    });
    const executed: string[] = [];
    const events: AgentEvent[] = [];
    const paused = await makeAgent(executed)
      .run(ask, { onEvent: (event) => events.push(event) })
      .final();
    expect(paused.status).toBe('needs-approval');
    expect(executed).toEqual([]);
    expect(paused.pendingApprovals).toEqual([
      { callId: 'a1', toolName: 'send_email', arguments: '{"to":"ann@example.com","body":"Hi"}' },
      { callId: 'a3', toolName: 'delete_file', arguments: '{"path":"/home/ann/thesis.pdf"}' },
    ]);
    expect(events.find((event) => event.type === 'approval-required')).toMatchObject({
      approvals: paused.pendingApprovals,
    });
    expect(server.requests).toHaveLength(1);

    // Store the state as text, as a server would between two HTTP requests.
    const stored = JSON.stringify(paused.state);
    const state = RunState.fromJSON(stored);
    expect(() => makeAgent(executed).resume(state)).toThrow(ApprovalPendingError);
    state.approve('a1', { message: 'Keep it short next time.' });
    state.reject('a3', { message: 'That is my thesis!' });

    const resumedExecuted: string[] = [];
    const resumed = await makeAgent(resumedExecuted)
      .resume(RunState.fromJSON(JSON.stringify(state)))
      .final();
    expect(resumed.status).toBe('completed');
    expect(resumedExecuted).toEqual(['email:ann@example.com', 'delete:/tmp/scratch']);
    const tools = resumed.messages.filter(
      (message): message is ToolMessage => message.role === 'tool',
    );
    expect(tools.map((message) => message.tool_call_id)).toEqual(['a1', 'a2', 'a3']);
    expect(tools[0]!.content).toBe(
      'sent to ann@example.com\n\n[The user approved this call and said: Keep it short next time.]',
    );
    expect(tools[1]!.content).toBe('deleted /tmp/scratch');
    expect(tools[2]!.content).toMatch(
      /user rejected this call to "delete_file".*That is my thesis!/,
    );
    // The response covers the whole logical run: the paused turn, the results, the answer.
    expect(resumed.messages.map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'tool',
      'tool',
      'assistant',
    ]);
    expect(resumed.messages[0]).toMatchObject({ name: 'ops', tool_calls: expect.any(Array) });
    expect(resumed.llmCalls).toBe(2);
    // The model saw the rejection.
    const secondRequest = server.requests[1]!.body.messages as ChatMessage[];
    expect(secondRequest.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'a3',
      content: expect.stringContaining('rejected'),
    });
  });

  it('refuses a state that is not one, and decisions for unknown calls', async () => {
    expect(() => RunState.fromJSON('{"version":2}')).toThrow(InvalidRunStateError);
    expect(() => RunState.fromJSON('not json')).toThrow(InvalidRunStateError);
    server = await startOpenAITestServer({
      script: [
        { toolCalls: [{ id: 'b1', name: 'send_email', arguments: { to: 'x@y.z', body: 'b' } }] },
      ],
    });
    const paused = await makeAgent([]).run(ask).final();
    expect(() => paused.state!.approve('zzz')).toThrow(InvalidRunStateError);
  });

  it('reports every rejection to the model when all calls are rejected', async () => {
    server = await startOpenAITestServer({
      script: [
        {
          toolCalls: [
            { id: 'c1', name: 'send_email', arguments: { to: 'boss@example.com', body: 'I quit' } },
          ],
        },
        { text: 'Understood, I did not send it.' },
      ],
    });
    const executed: string[] = [];
    const paused = await makeAgent(executed).run(ask).final();
    const resumed = await makeAgent(executed).resume(paused.state!.rejectAll()).final();
    expect(executed).toEqual([]);
    expect(resumed.messages.at(-1)!.content).toBe('Understood, I did not send it.');
    expect((server.requests[1]!.body.messages as ChatMessage[]).at(-1)!.content).toMatch(
      /rejected/,
    );
  });
});
