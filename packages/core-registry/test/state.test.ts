import { describe, expect, it } from '@jest/globals';
import { QuiverError } from '@quiver/core';
import { z } from 'zod';
import type { ToolkitState } from '../src/index.js';
import { BASIC_GROUP, Toolkit, defineTool } from '../src/index.js';

function makeToolkit(): Toolkit {
  const toolkit = new Toolkit();
  for (const name of ['web', 'files', 'code']) {
    toolkit.createGroup({ name, description: name });
    toolkit.register(
      defineTool({
        name: `${name}_tool`,
        description: 'd',
        parameters: z.object({}),
        execute: () => name,
      }),
      { group: name },
    );
  }
  return toolkit;
}

const active = (toolkit: Toolkit) => toolkit.getJsonSchemas().map((tool) => tool.function.name);

describe('export and import of toolkit state', () => {
  it('round-trips the active groups into a fresh toolkit (through JSON)', () => {
    const original = makeToolkit();
    original.activateGroups(['web', 'code']);
    const state = JSON.parse(JSON.stringify(original.exportState())) as ToolkitState;
    expect(state).toEqual({ version: 1, activeGroups: [BASIC_GROUP, 'web', 'code'] });

    const resumed = makeToolkit();
    expect(resumed.importState(state)).toEqual([]);
    expect(active(resumed)).toEqual(active(original));
  });

  it('deactivates groups the state does not name, never basic', () => {
    const toolkit = makeToolkit();
    toolkit.activateGroups(['web', 'files']);
    toolkit.importState({ version: 1, activeGroups: ['files'] });
    expect(
      toolkit
        .groups()
        .filter((group) => group.active)
        .map((group) => group.name),
    ).toEqual([BASIC_GROUP, 'files']);
  });

  it('reports named groups this toolkit does not have', () => {
    expect(makeToolkit().importState({ version: 1, activeGroups: ['web', 'gone'] })).toEqual([
      'gone',
    ]);
  });

  it.each([
    ['not an object', 'web'],
    ['a wrong version', { version: 2, activeGroups: [] }],
    ['groups that are not strings', { version: 1, activeGroups: [1] }],
    ['missing groups', { version: 1 }],
  ])('rejects %s with a configuration error and changes nothing', (_label, state) => {
    const toolkit = makeToolkit();
    toolkit.activateGroups(['web']);
    let thrown: unknown;
    try {
      toolkit.importState(state as never);
    } catch (error) {
      thrown = error;
    }
    expect(QuiverError.isInstance(thrown)).toBe(true);
    expect((thrown as QuiverError).code).toBe('configuration_invalid');
    expect(active(toolkit)).toEqual(['web_tool']);
  });
});
