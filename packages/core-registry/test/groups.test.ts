import { describe, expect, it } from '@jest/globals';
import { ToolRegistrationError } from '@quiver/core';
import { z } from 'zod';
import { BASIC_GROUP, META_TOOL_NAME, Toolkit, defineTool } from '../src/index.js';
import { collect, errorOf, finalChunk, textOf } from './helpers.js';

const tool = (name: string, group?: string) =>
  defineTool({
    name,
    description: `${name} tool`,
    parameters: z.object({}),
    execute: () => `${name} ran`,
    ...(group ? { group } : {}),
  });

function makeToolkit(): Toolkit {
  const toolkit = new Toolkit();
  toolkit.createGroup({
    name: 'web',
    description: 'Search and fetch web pages',
    notes: 'Cite the URL of every fact.',
  });
  toolkit.createGroup({
    name: 'files',
    description: 'Read and write files',
    notes: 'Never touch /etc.',
  });
  toolkit.register(tool('calculator'));
  toolkit.register(tool('web_search'), { group: 'web' });
  toolkit.register(tool('read_file', 'files'));
  return toolkit;
}

const names = (toolkit: Toolkit) => toolkit.getJsonSchemas().map((schema) => schema.function.name);
const call = (name: string, args = '{}') => ({ id: 'c', name, arguments: args });

describe('tool groups', () => {
  it('basic is always there and active; new groups start inactive', () => {
    const toolkit = makeToolkit();
    expect(toolkit.groups().map((group) => [group.name, group.active])).toEqual([
      [BASIC_GROUP, true],
      ['web', false],
      ['files', false],
    ]);
    expect(names(toolkit)).toEqual(['calculator']);
    expect(toolkit.getJsonSchemas({ includeInactive: true })).toHaveLength(3);
    expect(toolkit.list({ activeOnly: true }).map((registered) => registered.name)).toEqual([
      'calculator',
    ]);
  });

  it('activate and deactivate change getJsonSchemas; unknown names are reported back', () => {
    const toolkit = makeToolkit();
    expect(toolkit.activateGroups(['web', 'nope'])).toEqual(['nope']);
    expect(names(toolkit)).toEqual(['calculator', 'web_search']);
    expect(toolkit.isActive('web_search')).toBe(true);
    expect(toolkit.deactivateGroups(['web', BASIC_GROUP])).toEqual([]);
    expect(names(toolkit)).toEqual(['calculator']);
    expect(toolkit.isActive('calculator')).toBe(true);
  });

  it('a group created active is active', () => {
    const toolkit = new Toolkit();
    toolkit.createGroup({ name: 'on', description: 'd', active: true });
    toolkit.register(tool('t', 'on'));
    expect(names(toolkit)).toEqual(['t']);
  });

  it('calling a tool of an inactive group is an error naming the group, not a run', async () => {
    const toolkit = makeToolkit();
    const response = finalChunk(await collect(toolkit.call(call('web_search'))));
    const error = errorOf(response);
    expect(error.code).toBe('tool_not_found');
    expect(textOf(response)).toMatch(/group "web", which is not active/);
    expect(textOf(response)).toContain('calculator');
    toolkit.activateGroups(['web']);
    expect(textOf(await toolkit.callToCompletion(call('web_search')))).toBe('web_search ran');
  });

  it('removeGroup removes its tools; basic cannot be removed', () => {
    const toolkit = makeToolkit();
    expect(toolkit.removeGroup('web')).toBe(true);
    expect(toolkit.has('web_search')).toBe(false);
    expect(toolkit.removeGroup('web')).toBe(false);
    expect(toolkit.removeGroup(BASIC_GROUP)).toBe(false);
    expect(toolkit.has('calculator')).toBe(true);
  });

  it('rejects a duplicate or badly named group, and a tool naming a missing group', () => {
    const toolkit = makeToolkit();
    expect(() => toolkit.createGroup({ name: 'web', description: 'again' })).toThrow(
      /already exists/,
    );
    expect(() => toolkit.createGroup({ name: 'bad name', description: 'd' })).toThrow(
      ToolRegistrationError,
    );
    expect(() => toolkit.register(tool('x'), { group: 'missing' })).toThrow(
      /does not exist.*createGroup/,
    );
    expect(toolkit.has('x')).toBe(false);
  });

  it('groups() returns copies: changing them changes nothing', () => {
    const toolkit = makeToolkit();
    toolkit.groups().forEach((group) => (group.active = true));
    expect(names(toolkit)).toEqual(['calculator']);
  });
});

describe('the reset_equipped_tools meta tool', () => {
  const metaSchema = (toolkit: Toolkit) =>
    toolkit.getJsonSchemas().find((schema) => schema.function.name === META_TOOL_NAME)?.function
      .parameters;

  it('is opt-in', () => {
    expect(names(makeToolkit())).not.toContain(META_TOOL_NAME);
  });

  it('lists every non-basic group as a boolean property, with its description', () => {
    const toolkit = makeToolkit();
    toolkit.enableMetaTool();
    expect(metaSchema(toolkit)).toEqual({
      type: 'object',
      properties: {
        web: { type: 'boolean', description: 'Search and fetch web pages' },
        files: { type: 'boolean', description: 'Read and write files' },
      },
      additionalProperties: false,
    });
  });

  it('regenerates its schema when groups are created or removed', () => {
    const toolkit = makeToolkit();
    toolkit.enableMetaTool();
    toolkit.createGroup({ name: 'code', description: 'Run code' });
    expect(Object.keys(metaSchema(toolkit)?.properties ?? {})).toEqual(['web', 'files', 'code']);
    toolkit.removeGroup('web');
    expect(Object.keys(metaSchema(toolkit)?.properties ?? {})).toEqual(['files', 'code']);
  });

  it('sets the active groups and returns the notes of the ones it activated', async () => {
    const toolkit = makeToolkit();
    toolkit.enableMetaTool();
    const response = await toolkit.callToCompletion(
      call(META_TOOL_NAME, '{"web": true, "files": false}'),
    );
    expect(response.isError).toBeUndefined();
    const text = textOf(response);
    expect(text).toContain('web');
    expect(text).toContain('Cite the URL of every fact.');
    expect(text).not.toContain('Never touch /etc.');
    expect(names(toolkit)).toEqual(['calculator', 'web_search', META_TOOL_NAME]);

    // Groups left out are put away.
    const second = await toolkit.callToCompletion(call(META_TOOL_NAME, '{"files": true}'));
    expect(textOf(second)).toContain('Never touch /etc.');
    expect(names(toolkit)).toEqual(['calculator', 'read_file', META_TOOL_NAME]);

    const none = await toolkit.callToCompletion(call(META_TOOL_NAME, '{}'));
    expect(textOf(none)).toMatch(/only the basic tools/);
    expect(names(toolkit)).toEqual(['calculator', META_TOOL_NAME]);
  });

  it('an inactive tool’s error points the model at the meta tool', async () => {
    const toolkit = makeToolkit();
    toolkit.enableMetaTool();
    const response = finalChunk(await collect(toolkit.call(call('read_file'))));
    expect(textOf(response)).toContain(`Equip it first with ${META_TOOL_NAME}`);
  });

  it('rejects a group that does not exist, naming the real ones', async () => {
    const toolkit = makeToolkit();
    toolkit.enableMetaTool();
    const response = finalChunk(
      await collect(toolkit.call(call(META_TOOL_NAME, '{"shell": true}'))),
    );
    expect(errorOf(response).code).toBe('tool_argument_invalid');
    expect(textOf(response)).toMatch(/"shell".*web, files/);
  });

  it('sees groups created after it was enabled', async () => {
    const toolkit = makeToolkit();
    toolkit.enableMetaTool();
    toolkit.createGroup({ name: 'code', description: 'Run code', notes: 'Python only.' });
    toolkit.register(tool('python', 'code'));
    const response = await toolkit.callToCompletion(call(META_TOOL_NAME, '{"code": true}'));
    expect(textOf(response)).toContain('Python only.');
    expect(names(toolkit)).toContain('python');
  });
});
