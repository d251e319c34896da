import { describe, expect, it } from '@jest/globals';
import type { ToolDefinition } from '../src/index.js';
import { TOOL_NAME_PATTERN, localize, toOpenAITool, toolCallSchema } from '../src/index.js';

describe('tool contracts', () => {
  it('localize picks the language, falling back to English', () => {
    expect(localize('plain', 'zh')).toBe('plain');
    expect(localize({ en: 'Search', zh: '搜索' }, 'zh')).toBe('搜索');
    expect(localize({ en: 'Search', zh: '搜索' })).toBe('Search');
    expect(localize({ en: 'Search' }, 'zh')).toBe('Search');
  });

  it('toOpenAITool converts a definition, with strict only when asked', () => {
    const definition: ToolDefinition = {
      name: 'search',
      description: 'Search',
      parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      group: 'web',
      flags: { networkAccess: true },
    };
    expect(toOpenAITool(definition)).toEqual({
      type: 'function',
      function: { name: 'search', description: 'Search', parameters: definition.parameters },
    });
    expect(toOpenAITool(definition, { strict: true }).function.strict).toBe(true);
    expect(toOpenAITool(definition, { strict: false }).function.strict).toBe(false);
  });

  it('TOOL_NAME_PATTERN accepts what every major API accepts', () => {
    for (const name of ['a', 'web_search', 'get-weather', 'A1', 'x'.repeat(64)])
      expect(TOOL_NAME_PATTERN.test(name)).toBe(true);
    for (const name of ['', 'x'.repeat(65), 'has space', 'dot.name', 'slash/name', '中文'])
      expect(TOOL_NAME_PATTERN.test(name)).toBe(false);
  });

  it('toolCallSchema requires a string arguments field (raw, unparsed)', () => {
    expect(toolCallSchema.safeParse({ id: 'c', name: 'x', arguments: '{}' }).success).toBe(true);
    expect(toolCallSchema.safeParse({ id: 'c', name: 'x', arguments: {} }).success).toBe(false);
    expect(toolCallSchema.safeParse({ id: 'c', name: '', arguments: '{}' }).success).toBe(false);
  });
});
