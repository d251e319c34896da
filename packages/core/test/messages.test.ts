import { describe, expect, it } from '@jest/globals';
import type { ChatMessage } from '../src/index.js';
import { chatMessageSchema, messageText } from '../src/index.js';

describe('chat messages', () => {
  const valid: ChatMessage[] = [
    { role: 'system', content: 'You are helpful.' },
    { role: 'user', content: 'hi', name: 'ada' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this image?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
        { type: 'file', file: { path: '/tmp/report.pdf' } },
        { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
      ],
    },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } },
      ],
    },
    { role: 'assistant', content: 'Done.', reasoning_content: 'thinking' },
    { role: 'tool', tool_call_id: 'call_1', content: 'result' },
  ];

  it.each(valid.map((message) => [message.role, message] as const))(
    'accepts a valid %s message',
    (_role, message) => {
      expect(chatMessageSchema.safeParse(message).success).toBe(true);
    },
  );

  it.each([
    ['an unknown role', { role: 'developer', content: 'x' }],
    ['a tool message without tool_call_id', { role: 'tool', content: 'x' }],
    [
      'a system message with an image',
      { role: 'system', content: [{ type: 'image_url', image_url: { url: 'u' } }] },
    ],
    ['a user message with null content', { role: 'user', content: null }],
    [
      'a tool call of the wrong type',
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'code', function: { name: 'x', arguments: '' } }],
      },
    ],
    [
      'tool call arguments as an object',
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'x', arguments: {} } }],
      },
    ],
    ['a file part that names nothing', { role: 'user', content: [{ type: 'file', file: {} }] }],
    [
      'an image part with an empty url',
      { role: 'user', content: [{ type: 'image_url', image_url: { url: '' } }] },
    ],
    [
      'an unsupported audio format',
      {
        role: 'user',
        content: [{ type: 'input_audio', input_audio: { data: 'A', format: 'ogg' } }],
      },
    ],
  ])('rejects %s', (_label, message) => {
    expect(chatMessageSchema.safeParse(message).success).toBe(false);
  });

  it('messageText joins text parts and skips the rest', () => {
    expect(messageText({ content: null })).toBe('');
    expect(messageText({ content: 'plain' })).toBe('plain');
    expect(messageText(valid[2]!)).toBe('What is in this image?');
    expect(
      messageText({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toBe('a\nb');
  });
});
