import { describe, expect, it } from '@jest/globals';
import type { ToolContext } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, defineTool } from '../src/index.js';

const parameters = z.object({ path: z.string(), force: z.boolean().optional() });

function makeToolkit(warnings: string[] = []): Toolkit {
  const logger = {
    debug() {},
    info() {},
    error() {},
    warn: (message: string) => warnings.push(message),
  };
  const toolkit = new Toolkit({ logger });
  toolkit.register(
    defineTool({ name: 'read', description: 'd', parameters, execute: () => 'read' }),
  );
  toolkit.register(
    defineTool({
      name: 'wipe',
      description: 'd',
      parameters,
      needsApproval: true,
      execute: () => 'wiped',
    }),
  );
  toolkit.register(
    defineTool({
      name: 'delete',
      description: 'd',
      parameters,
      needsApproval: async ({ path, force }) => path.startsWith('/etc') || force === true,
      execute: () => 'deleted',
    }),
  );
  toolkit.register(
    defineTool({
      name: 'moody',
      description: 'd',
      parameters,
      needsApproval: () => {
        throw new Error('policy service down');
      },
      execute: () => 'ran',
    }),
  );
  return toolkit;
}

const call = (name: string, args: unknown) => ({
  id: 'c',
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});

describe('needsApproval', () => {
  it('false by default, true when the flag is set', async () => {
    const toolkit = makeToolkit();
    expect(await toolkit.requiresApproval(call('read', { path: '/etc/passwd' }))).toBe(false);
    expect(await toolkit.requiresApproval(call('wipe', { path: '/tmp' }))).toBe(true);
  });

  it('a predicate decides per call from the (leniently parsed) arguments', async () => {
    const toolkit = makeToolkit();
    expect(await toolkit.requiresApproval(call('delete', { path: '/etc/hosts' }))).toBe(true);
    expect(await toolkit.requiresApproval(call('delete', { path: '/tmp/x' }))).toBe(false);
    expect(
      await toolkit.requiresApproval(call('delete', "{'path': '/tmp/x', 'force': True}")),
    ).toBe(true);
  });

  it('a predicate that throws means "ask" and is logged', async () => {
    const warnings: string[] = [];
    const toolkit = makeToolkit(warnings);
    expect(await toolkit.requiresApproval(call('moody', { path: '/tmp' }))).toBe(true);
    expect(warnings).toHaveLength(1);
  });

  it('unreadable arguments mean "ask" for a predicate', async () => {
    const toolkit = makeToolkit();
    expect(await toolkit.requiresApproval(call('delete', 'rm -rf /'))).toBe(true);
  });

  it('an unknown tool needs no approval (the call will fail anyway)', async () => {
    expect(await makeToolkit().requiresApproval(call('nope', {}))).toBe(false);
  });

  it('the predicate sees preset arguments and the caller context', async () => {
    let seen: { args: unknown; context: ToolContext } | undefined;
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'send',
        description: 'd',
        parameters: z.object({ to: z.string(), account: z.string() }),
        needsApproval: (args, context) => {
          seen = { args, context };
          return args.account === 'prod';
        },
        execute: () => 'sent',
      }),
      { presetArgs: { account: 'prod' } },
    );
    const state = new Map([['k', 'v']]);
    expect(
      await toolkit.requiresApproval(
        { id: 'call-9', name: 'send', arguments: '{"to":"a@b.c","account":"dev"}' },
        { state },
      ),
    ).toBe(true);
    expect(seen?.args).toEqual({ to: 'a@b.c', account: 'prod' });
    expect(seen?.context.callId).toBe('call-9');
    expect(seen?.context.state).toBe(state);
  });

  it('is metadata only: call() still runs the tool (the agent loop decides)', async () => {
    const response = await makeToolkit().callToCompletion(call('wipe', { path: '/tmp' }));
    expect(response.content).toEqual([{ type: 'text', text: 'wiped' }]);
  });
});
