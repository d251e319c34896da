import { describe, expect, it } from '@jest/globals';
import { TOOL_NAME_PATTERN } from '@quiver/core';
import { defaultToolName } from '../src/index.js';

describe('defaultToolName', () => {
  it('joins server and tool with a double underscore', () => {
    expect(defaultToolName('fs', 'read_file')).toBe('fs__read_file');
  });

  it('replaces characters models do not accept', () => {
    expect(defaultToolName('my.server', 'tools/get thing')).toBe('my_server__tools_get_thing');
  });

  it('shortens long names with a stable hash so that distinct names stay distinct', () => {
    const a = defaultToolName('server', 'x'.repeat(80));
    const b = defaultToolName('server', `${'x'.repeat(79)}y`);
    expect(a).toMatch(TOOL_NAME_PATTERN);
    expect(a).toHaveLength(64);
    expect(a).not.toBe(b);
    expect(defaultToolName('server', 'x'.repeat(80))).toBe(a);
  });
});
