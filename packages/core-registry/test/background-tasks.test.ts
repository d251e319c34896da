import { describe, expect, it } from '@jest/globals';
import { responseText } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, defineTool, enableBackgroundTasks } from '../src/index.js';

function setup(options: { maxOutputChars?: number } = {}) {
  const toolkit = new Toolkit();
  const tasks = enableBackgroundTasks(toolkit, options);
  const state = { aborted: false, release: () => {} };
  const gate = new Promise<void>((resolve) => (state.release = resolve));
  toolkit.register(
    defineTool({
      name: 'slow_job',
      description: 'streams lines, then waits for a gate',
      background: true,
      parameters: z.object({ lines: z.number().int().min(0), fail: z.boolean().default(false) }),
      async *execute({ lines, fail }, context) {
        context.signal.addEventListener('abort', () => (state.aborted = true));
        for (let index = 0; index < lines; index++) yield `line ${index}\n`;
        await Promise.race([
          gate,
          new Promise((resolve) => context.signal.addEventListener('abort', resolve)),
        ]);
        if (context.signal.aborted) return;
        if (fail) throw new Error('the job broke');
        return 'done';
      },
    }),
  );
  let id = 0;
  const call = (name: string, args: Record<string, unknown>) =>
    toolkit.callToCompletion({ id: `c${++id}`, name, arguments: JSON.stringify(args) });
  const taskIdOf = (response: { metadata?: Record<string, unknown> }) =>
    (response.metadata?.task as { taskId: string }).taskId;
  return { toolkit, tasks, state, call, taskIdOf };
}

describe('background tasks', () => {
  it('returns a task id at once, keeps streamed output, and gives the result to wait_task', async () => {
    const { call, state, taskIdOf, tasks } = setup();
    const started = await call('slow_job', { lines: 3 });
    expect(responseText(started)).toMatch(/Started background task task_/);
    const taskId = taskIdOf(started);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const progress = await call('view_task', { task_id: taskId });
    expect(responseText(progress)).toMatch(/running/);
    expect(responseText(progress)).toContain('line 2');
    state.release();
    const result = await call('wait_task', { task_id: taskId, timeout_seconds: 5 });
    expect(responseText(result)).toMatch(/completed/);
    expect(responseText(result)).toMatch(/line 0\nline 1\nline 2\ndone$/);
    // Collected: a finished task is forgotten once its output was returned.
    expect(tasks.ids()).not.toContain(taskId);
    expect((await call('view_task', { task_id: taskId })).metadata?.error?.code).toBe(
      'task_not_found',
    );
  });

  it('wait_task returns the output so far when its timeout passes first', async () => {
    const { call, taskIdOf, state } = setup();
    const taskId = taskIdOf(await call('slow_job', { lines: 1 }));
    const early = await call('wait_task', { task_id: taskId, timeout_seconds: 0.05 });
    expect(responseText(early)).toMatch(/running/);
    state.release();
  });

  it('reports a task whose tool throws as failed', async () => {
    const { call, taskIdOf, state } = setup();
    const taskId = taskIdOf(await call('slow_job', { lines: 0, fail: true }));
    state.release();
    const result = await call('wait_task', { task_id: taskId, timeout_seconds: 5 });
    expect(result.isError).toBe(true);
    expect(responseText(result)).toMatch(/failed[\s\S]*the job broke/);
  });

  it('cancel_task aborts the tool signal', async () => {
    const { call, taskIdOf, state } = setup();
    const taskId = taskIdOf(await call('slow_job', { lines: 1 }));
    const cancelled = await call('cancel_task', { task_id: taskId });
    expect(responseText(cancelled)).toMatch(/cancelled/);
    expect(state.aborted).toBe(true);
  });

  it('keeps output bounded, dropping the oldest', async () => {
    const { call, taskIdOf, state } = setup({ maxOutputChars: 100 });
    const taskId = taskIdOf(await call('slow_job', { lines: 200 }));
    state.release();
    const result = await call('wait_task', { task_id: taskId, timeout_seconds: 5 });
    const text = responseText(result);
    expect(text).toMatch(/characters of output were dropped/);
    expect(text).toContain('line 199');
    expect(text).not.toContain('line 0\n');
  });

  it('rejects invalid arguments at once instead of starting a task', async () => {
    const { call, tasks } = setup();
    const response = await call('slow_job', { lines: 'many' });
    expect(response.metadata?.error?.code).toBe('tool_argument_invalid');
    expect(tasks.ids()).toEqual([]);
  });

  it('never lets a task outlive toolkit.close(), even one never collected', async () => {
    const { toolkit, call, taskIdOf, state, tasks } = setup();
    taskIdOf(await call('slow_job', { lines: 1 }));
    await toolkit.close();
    expect(state.aborted).toBe(true);
    expect(tasks.ids()).toEqual([]);
  });
});

describe('background tasks without setup', () => {
  it('are enabled by registering a background tool, once', async () => {
    const toolkit = new Toolkit();
    expect(toolkit.backgroundTasks).toBeUndefined();
    const job = (name: string) =>
      defineTool({
        name,
        description: 'job',
        background: true,
        parameters: z.object({}),
        execute: async () => 'ok',
      });
    toolkit.register(job('first_job'));
    toolkit.register(job('second_job'));
    expect(toolkit.backgroundTasks).toBeDefined();
    expect(enableBackgroundTasks(toolkit)).toBe(toolkit.backgroundTasks);
    const names = toolkit.list().map((tool) => tool.name);
    expect(names.filter((name) => name === 'wait_task')).toHaveLength(1);
    const started = await toolkit.callToCompletion({ id: '1', name: 'first_job', arguments: '{}' });
    const taskId = (started.metadata?.task as { taskId: string }).taskId;
    const result = await toolkit.callToCompletion({
      id: '2',
      name: 'wait_task',
      arguments: JSON.stringify({ task_id: taskId }),
    });
    expect(responseText(result)).toMatch(/completed[\s\S]*ok$/);
    await toolkit.close();
  });
});

describe('background tasks and strict-mode nulls', () => {
  it('starts a task when an optional field is null, as strict provider schemas send it', async () => {
    const toolkit = new Toolkit();
    toolkit.register(
      defineTool({
        name: 'null_job',
        description: 'job',
        background: true,
        parameters: z.object({ label: z.string().optional() }),
        execute: async ({ label }) => `label: ${label ?? 'none'}`,
      }),
    );
    const started = await toolkit.callToCompletion({
      id: '1',
      name: 'null_job',
      arguments: '{"label": null}',
    });
    expect(responseText(started)).toMatch(/Started background task/);
    const taskId = (started.metadata?.task as { taskId: string }).taskId;
    const result = await toolkit.callToCompletion({
      id: '2',
      name: 'wait_task',
      arguments: JSON.stringify({ task_id: taskId }),
    });
    expect(responseText(result)).toMatch(/label: none$/);
    await toolkit.close();
  });
});
