import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChatMessage, ToolMessage } from '@quiver/core';
import type { AgentEvent } from '../src/agent-events.js';
import { FnCallAgent } from '../src/fn-call-agent.js';
import { OpenAIChatModel } from '../src/openai-chat-model.js';
import type { OpenAITestServer, ScriptedReply } from '../src/testing.js';
import { startOpenAITestServer } from '../src/testing.js';
import { addTool } from './helpers.js';

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function textAgent(protocol: 'qwen' | 'hermes', script: ScriptedReply[]) {
  server = await startOpenAITestServer({ script });
  const model = new OpenAIChatModel({
    baseURL: server.baseURL,
    apiKey: 'k',
    model: 'qwen-base',
    retry: { maxRetries: 0 },
  });
  return new FnCallAgent({ model, tools: [addTool], toolProtocol: protocol });
}

function visibleText(events: AgentEvent[]): string {
  return events
    .map((event) =>
      event.type === 'model-delta' && event.delta.type === 'text-delta' ? event.delta.text : '',
    )
    .join('');
}

describe('text-protocol mode over the OpenAI test server', () => {
  it('runs a Qwen ✿FUNCTION✿ transcript end to end without showing the protocol', async () => {
    const agent = await textAgent('qwen', [
      // The model also invents a result; the server cuts it at the ✿RESULT✿ stop word, as vLLM would.
      {
        text: 'I will add them.\n✿FUNCTION✿: add\n✿ARGS✿: {"a": 40, "b": 2}\n✿RESULT✿: 41\n✿RETURN✿: It is 41.',
        chunkSize: 3,
      },
      { text: 'The sum is 42.', chunkSize: 3 },
    ]);
    const events: AgentEvent[] = [];
    const snapshots: ChatMessage[][] = [];
    const run = agent.run([{ role: 'user', content: 'What is 40 + 2?' }], {
      onEvent: (event) => events.push(event),
    });
    for await (const response of run) snapshots.push(response);
    const result = run.result!;

    const first = server!.requests[0]!.body;
    expect(first.tools).toBeUndefined();
    expect(first.stop).toEqual(['✿RESULT✿']);
    const system = (first.messages as ChatMessage[])[0]!.content as string;
    expect(system).toContain('## You have access to the following tools:');
    expect(system).toContain('### add');
    expect(system).toContain('✿FUNCTION✿: The tool to use, should be one of [add]');

    expect(result.messages.map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(result.messages[0]).toMatchObject({
      content: 'I will add them.',
      tool_calls: [{ function: { name: 'add', arguments: '{"a":40,"b":2}' } }],
    });
    expect((result.messages[1] as ToolMessage).content).toBe('42');
    expect(result.messages[2]!.content).toBe('The sum is 42.');
    expect(visibleText(events)).not.toMatch(/✿|FUNCTION|ARGS/);
    for (const snapshot of snapshots)
      expect(JSON.stringify(snapshot.map((message) => message.content))).not.toContain('✿');

    // The history goes back to the model in the protocol, not as native tool messages.
    const second = server!.requests[1]!.body.messages as ChatMessage[];
    expect(second.some((message) => message.role === 'tool')).toBe(false);
    expect(second.at(-2)).toMatchObject({
      role: 'assistant',
      content: expect.stringContaining('✿FUNCTION✿: add\n✿ARGS✿: {"a":40,"b":2}'),
    });
    expect(second.at(-1)).toEqual({ role: 'user', content: '✿RESULT✿: 42' });
  });

  it('uses the Chinese Qwen prompt for a Chinese conversation', async () => {
    const agent = await textAgent('qwen', [
      { text: '✿FUNCTION✿：add\n✿ARGS✿：{"a": 1, "b": 1}' },
      { text: '等于 2。' },
    ]);
    const result = await agent.run([{ role: 'user', content: '一加一等于几？' }]).final();
    const system = (server!.requests[0]!.body.messages as ChatMessage[])[0]!.content as string;
    expect(system).toContain('## 你拥有如下工具：');
    expect(result.messages.at(-1)!.content).toBe('等于 2。');
    expect((result.messages[1] as ToolMessage).content).toBe('2');
  });

  it('runs Hermes <tool_call> transcripts, including malformed JSON, and reports unreadable calls to the model', async () => {
    const agent = await textAgent('hermes', [
      {
        text: '<tool_call>\n{\'name\': \'add\', \'arguments\': {\'a\': 1, \'b\': 2,}}\n</tool_call>\n<tool_call>\n{"name": "add", "arguments": {"a": 10, "b": 20}}\n</tool_call>',
        chunkSize: 5,
      },
      { text: '<tool_call>{"arguments": {"a": 1}}</tool_call>', chunkSize: 4 },
      { text: 'Results: 3 and 30.' },
    ]);
    const events: AgentEvent[] = [];
    const result = await agent
      .run([{ role: 'user', content: 'Add 1+2 and 10+20' }], {
        onEvent: (event) => events.push(event),
      })
      .final();
    const system = (server!.requests[0]!.body.messages as ChatMessage[])[0]!.content as string;
    expect(system).toContain('<tools>\n{"type":"function","function":{"name":"add"');
    expect(server!.requests[0]!.body.stop).toEqual(['<tool_response>']);
    const tools = result.messages.filter(
      (message): message is ToolMessage => message.role === 'tool',
    );
    expect(tools.map((message) => message.content)).toEqual([
      '3',
      '30',
      expect.stringContaining('Tool "unreadable_tool_call" does not exist. Available tools: add'),
    ]);
    expect(visibleText(events)).toBe('Results: 3 and 30.');
    const second = server!.requests[1]!.body.messages as ChatMessage[];
    expect(second.at(-1)).toEqual({
      role: 'user',
      content: '<tool_response>\n3\n</tool_response>\n<tool_response>\n30\n</tool_response>',
    });
    expect(result.messages.at(-1)!.content).toBe('Results: 3 and 30.');
  });
});
