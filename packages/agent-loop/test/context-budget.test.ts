import { describe, expect, it } from '@jest/globals';
import type { ChatMessage } from '@quiver/core';
import { fitToContextWindow } from '../src/context-budget.js';
import { countMessageTokens } from '../src/token-counter.js';

const paragraph = 'The quick brown fox jumps over the lazy dog near the riverbank at dawn. ';

function conversation(turns: number): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: 'You are terse.' }];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: 'user', content: `question ${turn}: ${paragraph.repeat(5)}` });
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${turn}`,
          type: 'function',
          function: { name: 'search', arguments: `{"q":"${turn}"}` },
        },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${turn}`, content: paragraph.repeat(8) });
    messages.push({ role: 'assistant', content: `answer ${turn}: ${paragraph.repeat(3)}` });
  }
  messages.push({ role: 'user', content: 'latest question' });
  return messages;
}

describe('fitToContextWindow', () => {
  it('returns everything when it fits, without tokenising', () => {
    const messages = conversation(2);
    const result = fitToContextWindow(messages, { contextWindow: 100_000 });
    expect(result.droppedMessages).toBe(0);
    expect(result.messages).toEqual(messages);
  });

  it('keeps the system message and the latest turns, within the budget', () => {
    const messages = conversation(12);
    const result = fitToContextWindow(messages, { contextWindow: 2000, reserveTokens: 500 });
    expect(result.droppedMessages).toBeGreaterThan(0);
    expect(result.messages[0]!.role).toBe('system');
    expect(result.messages[0]!.content).toMatch(
      /^You are terse\.\n\n\(\d+ earlier messages were left out to fit the context window\.\)$/,
    );
    expect(result.messages.at(-1)).toEqual({ role: 'user', content: 'latest question' });
    // The kept history is a suffix of the original that starts at a user message.
    const kept = result.messages.slice(1);
    expect(kept).toEqual(messages.slice(messages.length - kept.length));
    expect(kept[0]!.role).toBe('user');
    expect(result.droppedMessages).toBe(messages.length - 1 - kept.length);
    const total = result.messages.reduce((sum, message) => sum + countMessageTokens(message), 0);
    expect(total).toBeLessThanOrEqual(1500);
    expect(result.overBudget).toBe(false);
  });

  it('never separates a tool call from its result', () => {
    const messages = conversation(20);
    for (const window of [700, 900, 1300, 1700, 2500, 4000]) {
      const kept = fitToContextWindow(messages, {
        contextWindow: window,
        reserveTokens: 200,
      }).messages;
      const calls = kept.flatMap((message) =>
        message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : [],
      );
      const results = kept.flatMap((message) =>
        message.role === 'tool' ? [message.tool_call_id] : [],
      );
      expect(results).toEqual(calls);
    }
  });

  it('keeps the latest turn even when it alone is over budget, and says so', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'old' },
      { role: 'assistant', content: 'old answer' },
      { role: 'user', content: paragraph.repeat(50) },
    ];
    const result = fitToContextWindow(messages, {
      contextWindow: 300,
      reserveTokens: 100,
      language: 'zh',
    });
    expect(result.overBudget).toBe(true);
    expect(result.messages.at(-1)).toEqual(messages[2]);
    expect(result.messages[0]).toEqual({
      role: 'system',
      content: '（为适应上下文长度，省略了更早的 2 条消息。）',
    });
  });

  it('counts CJK text with the real tokenizer', () => {
    const chinese: ChatMessage = {
      role: 'user',
      content: '上下文窗口的预算需要用真正的分词器来计算。'.repeat(20),
    };
    const tokens = countMessageTokens(chinese);
    // Far fewer tokens than UTF-8 bytes, more than a tenth of the characters.
    expect(tokens).toBeLessThan(Buffer.byteLength(chinese.content as string));
    expect(tokens).toBeGreaterThan((chinese.content as string).length / 10);
  });
});
