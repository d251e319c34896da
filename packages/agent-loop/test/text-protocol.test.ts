import { describe, expect, it } from '@jest/globals';
import type { ChatMessage } from '@quiver/core';
import {
  TextProtocolParser,
  UNREADABLE_TOOL_NAME,
  toTextProtocolMessages,
} from '../src/text-protocol.js';

/** Feed the text in pieces of `size` characters; return the visible text and the calls. */
function parse(protocol: 'qwen' | 'hermes', text: string, size: number) {
  const parser = new TextProtocolParser(protocol);
  let visible = '';
  for (let index = 0; index < text.length; index += size)
    visible += parser.push(text.slice(index, index + size));
  visible += parser.end();
  return { visible, calls: parser.calls };
}

describe('TextProtocolParser (qwen)', () => {
  const transcript =
    'Let me check the weather.\n✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Paris"}\n✿FUNCTION✿: get_time\n✿ARGS✿: {"tz": "Europe/Paris"}';

  it.each([1, 2, 3, 7, 1000])(
    'finds every call and hides the protocol, fed %i characters at a time',
    (size) => {
      const { visible, calls } = parse('qwen', transcript, size);
      expect(visible.trim()).toBe('Let me check the weather.');
      expect(visible).not.toMatch(/✿|FUNCTION|ARGS/);
      expect(calls).toEqual([
        { name: 'get_weather', arguments: '{"city":"Paris"}' },
        { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
      ]);
    },
  );

  it('repairs malformed arguments and defaults missing ones', () => {
    const { calls } = parse(
      'qwen',
      "✿FUNCTION✿: search\n✿ARGS✿: {'query': 'rust', 'exact': True,}\n✿FUNCTION✿：list_files",
      4,
    );
    expect(calls).toEqual([
      { name: 'search', arguments: '{"query":"rust","exact":true}' },
      { name: 'list_files', arguments: '{}' },
    ]);
  });

  it('hides a result the model invents and keeps the text after ✿RETURN✿', () => {
    const { visible, calls } = parse(
      'qwen',
      '✿FUNCTION✿: add\n✿ARGS✿: {"a":1,"b":2}\n✿RESULT✿: 3\n✿RETURN✿: The answer is 3.',
      5,
    );
    expect(calls).toEqual([{ name: 'add', arguments: '{"a":1,"b":2}' }]);
    expect(visible.trim()).toBe('The answer is 3.');
  });

  it('keeps arguments it cannot repair as written, for the toolkit to explain', () => {
    const { calls } = parse('qwen', '✿FUNCTION✿: write\n✿ARGS✿: {"path": "/tmp/rep', 3);
    expect(calls).toEqual([{ name: 'write', arguments: '{"path": "/tmp/rep' }]);
  });

  it('passes plain text through untouched, even a lone ✿', () => {
    expect(parse('qwen', 'Flowers ✿ are nice.', 2)).toEqual({
      visible: 'Flowers ✿ are nice.',
      calls: [],
    });
  });
});

describe('TextProtocolParser (hermes)', () => {
  it.each([1, 4, 1000])('parses several <tool_call> blocks fed %i characters at a time', (size) => {
    const text =
      'I will look both up.\n<tool_call>\n{"name": "lookup", "arguments": {"q": "alpha"}}\n</tool_call>\n<tool_call>\n{"name": "lookup", "arguments": {"q": "beta"}}\n</tool_call>';
    const { visible, calls } = parse('hermes', text, size);
    expect(visible.trim()).toBe('I will look both up.');
    expect(calls).toEqual([
      { name: 'lookup', arguments: '{"q":"alpha"}' },
      { name: 'lookup', arguments: '{"q":"beta"}' },
    ]);
  });

  it('tolerates the malformed JSON such models emit', () => {
    const text = [
      "<tool_call>{'name': 'add', 'arguments': {'a': 1, 'b': 2,}}</tool_call>",
      '<tool_call>\n```json\n{"name": "add", "arguments": "{\\"a\\": 5, \\"b\\": 6}"}\n```\n</tool_call>',
      '<tool_call>{"name": "search", "arguments": {"q": "unterminated}</tool_call>',
      '<tool_call>{"arguments": {}}</tool_call>',
      '<tool_call>{"name": "add", "arguments": {"a": 7, "b": 8}',
    ].join('\n');
    const { visible, calls } = parse('hermes', text, 6);
    expect(visible.trim()).toBe('');
    expect(calls).toEqual([
      { name: 'add', arguments: '{"a":1,"b":2}' },
      { name: 'add', arguments: '{"a":5,"b":6}' },
      // The brace is inside the unterminated string: the toolkit will ask for the whole object again.
      { name: 'search', arguments: '{"q": "unterminated}' },
      { name: UNREADABLE_TOOL_NAME, arguments: '{"arguments":{}}' },
      { name: 'add', arguments: '{"a":7,"b":8}' },
    ]);
  });

  it('holds back a partial tag until it knows, and releases text that only looked like one', () => {
    const parser = new TextProtocolParser('hermes');
    expect(parser.push('a < b and <tool_')).toBe('a < b and ');
    expect(parser.push('box> too')).toBe('<tool_box> too');
    expect(parser.end()).toBe('');
  });
});

describe('toTextProtocolMessages', () => {
  const history: ChatMessage[] = [
    { role: 'user', content: 'add' },
    {
      role: 'assistant',
      content: 'Adding.',
      tool_calls: [
        { id: '1', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } },
        { id: '2', type: 'function', function: { name: 'add', arguments: '{"a":3,"b":4}' } },
      ],
    },
    { role: 'tool', tool_call_id: '1', content: '3' },
    { role: 'tool', tool_call_id: '2', content: '7' },
  ];

  it('writes calls into the assistant text and results into one user message (qwen)', () => {
    expect(toTextProtocolMessages(history, 'qwen').slice(1)).toEqual([
      {
        role: 'assistant',
        content:
          'Adding.\n✿FUNCTION✿: add\n✿ARGS✿: {"a":1,"b":2}\n✿FUNCTION✿: add\n✿ARGS✿: {"a":3,"b":4}',
      },
      { role: 'user', content: '✿RESULT✿: 3\n✿RESULT✿: 7' },
    ]);
  });

  it('uses <tool_call> and <tool_response> blocks (hermes)', () => {
    expect(toTextProtocolMessages(history, 'hermes').slice(1)).toEqual([
      {
        role: 'assistant',
        content:
          'Adding.\n<tool_call>\n{"name": "add", "arguments": {"a":1,"b":2}}\n</tool_call>\n<tool_call>\n{"name": "add", "arguments": {"a":3,"b":4}}\n</tool_call>',
      },
      {
        role: 'user',
        content: '<tool_response>\n3\n</tool_response>\n<tool_response>\n7\n</tool_response>',
      },
    ]);
  });
});
