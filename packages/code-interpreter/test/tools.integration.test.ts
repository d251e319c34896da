import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { Toolkit } from '@quiver/core-registry';
import { CodeInterpreter } from '../src/code-interpreter.js';
import { createCodeInterpreterTool, createPythonExecutorTool } from '../src/tools.js';
import { makeWorkRoot, textOf, waitForNoProcesses } from './helpers.js';

const workRoot = makeWorkRoot('qci-tools');
const interpreter = new CodeInterpreter({
  sandbox: 'none',
  workRoot,
  poolSize: 1,
  memoryLimitMb: 3072,
});
const toolkit = new Toolkit();
toolkit.register(createCodeInterpreterTool({ interpreter }));
toolkit.register(createPythonExecutorTool({ interpreter }));

afterAll(async () => {
  await interpreter.close();
  const left = await waitForNoProcesses(workRoot);
  rmSync(workRoot, { recursive: true, force: true });
  expect(left).toEqual([]);
});

function call(name: string, args: Record<string, unknown>, state = new Map<string, unknown>()) {
  return toolkit.callToCompletion({ id: 'c', name, arguments: JSON.stringify(args) }, { state });
}

describe('code_interpreter tool', () => {
  it('streams output as partial chunks while the code runs', async () => {
    const chunks: ToolResponse[] = [];
    const stream = toolkit.call(
      {
        id: 's',
        name: 'code_interpreter',
        arguments: JSON.stringify({
          code: 'import time\nprint("first", flush=True)\ntime.sleep(0.5)\nprint("second")',
        }),
      },
      { state: new Map() },
    );
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(textOf(chunks[0]!.content)).toBe('first\n');
    expect(chunks.at(-1)!.isLast).toBe(true);
    expect(chunks.at(-1)!.metadata).toMatchObject({ status: 'ok' });
    expect(chunks.map((chunk) => textOf(chunk.content)).join('')).toBe('first\nsecond\n');
  });

  it('keeps state across calls that share the agent state', async () => {
    const state = new Map<string, unknown>();
    await call('code_interpreter', { code: 'total = 40' }, state);
    const response = await call('code_interpreter', { code: 'total + 2' }, state);
    expect(textOf(response.content)).toBe('42\n');
    expect(response.isError).toBeUndefined();
    const fresh = await call('code_interpreter', { code: "print('total' in dir())" });
    expect(textOf(fresh.content)).toBe('False\n');
  });

  it('marks a Python exception as an error with the traceback', async () => {
    const response = await call('code_interpreter', { code: '{}["missing"]' });
    expect(response.isError).toBe(true);
    expect(textOf(response.content)).toContain("KeyError: 'missing'");
    expect(response.metadata).toMatchObject({
      status: 'error',
      error: { code: 'python_exception', ename: 'KeyError' },
    });
  });

  it('rejects empty code as an argument error', async () => {
    const response = await call('code_interpreter', { code: '' });
    expect(response.isError).toBe(true);
    expect(response.metadata?.error).toMatchObject({ code: 'tool_argument_invalid' });
  });

  it('returns partial output and a timeout error at timeout_seconds, keeping the session', async () => {
    const state = new Map<string, unknown>();
    await call('code_interpreter', { code: 'survivor = "here"' }, state);
    const response = await call(
      'code_interpreter',
      { code: 'import time\nprint("partial", flush=True)\ntime.sleep(30)', timeout_seconds: 0.5 },
      state,
    );
    expect(response.isError).toBe(true);
    expect(textOf(response.content)).toContain('partial\n');
    expect(response.metadata).toMatchObject({
      status: 'timeout',
      stateLost: false,
      error: { code: 'execution_timeout' },
    });
    expect(
      textOf((await call('code_interpreter', { code: 'print(survivor)' }, state)).content),
    ).toBe('here\n');
  });

  it('says so when the code prints nothing', async () => {
    expect(textOf((await call('code_interpreter', { code: 'x = 1' })).content)).toBe('(no output)');
  });
});

describe('python_executor tool', () => {
  it('runs stateless one-shot code and closes its session', async () => {
    const before = interpreter.sessionIds.length;
    const first = await call('python_executor', { code: 'y = 6 * 7\nprint(y)' });
    expect(textOf(first.content)).toBe('42\n');
    const second = await call('python_executor', { code: 'print(y)' });
    expect(second.isError).toBe(true);
    expect(textOf(second.content)).toContain('NameError');
    expect(interpreter.sessionIds.length).toBe(before);
  });

  it('closes its session even when the call fails before running', async () => {
    const before = interpreter.sessionIds.length;
    const response = await call('python_executor', { code: '1', files: ['/etc/hostname'] });
    expect(response.isError).toBe(true);
    expect(response.metadata?.error).toMatchObject({ code: 'file_not_allowed' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(interpreter.sessionIds.length).toBe(before);
  });

  it('describes itself in English and Chinese', () => {
    expect(createPythonExecutorTool({ interpreter }).definition('zh').description).toMatch(
      /解释器/,
    );
    expect(createCodeInterpreterTool({ interpreter }).definition('en').description).toMatch(
      /persistent Jupyter/,
    );
  });
});
