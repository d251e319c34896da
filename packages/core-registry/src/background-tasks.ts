import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ToolResponse } from '@quiver/core';
import { ToolExecutionError, responseText, textBlock } from '@quiver/core';
import { defineTool } from './define-tool.js';
import type { ToolMiddleware } from './middleware.js';
import { mergeResponses } from './responses.js';
import { validateRegistered } from './validate-registered.js';
import type { Toolkit } from './toolkit.js';

/** Where a background task is. */
export type TaskStatus = 'running' | 'completed' | 'failed' | 'cancelled';

/** What `view_task` / `wait_task` report about a task. */
export interface TaskSnapshot {
  taskId: string;
  toolName: string;
  status: TaskStatus;
  startedAt: string;
  finishedAt?: string;
  /** Output so far (everything, once finished), gathered into one response. */
  output: ToolResponse;
  /** Characters of early output dropped to keep the buffer bounded. */
  droppedChars: number;
}

interface TaskRecord {
  id: string;
  toolName: string;
  status: TaskStatus;
  startedAt: Date;
  finishedAt?: Date;
  chunks: ToolResponse[];
  bufferedChars: number;
  droppedChars: number;
  controller: AbortController;
  done: Promise<void>;
}

/** Options of {@link enableBackgroundTasks}. */
export interface BackgroundTaskOptions {
  /** Output kept per task until it is collected, in characters of text. Default 200,000. */
  maxOutputChars?: number;
  /** Finished tasks kept uncollected; beyond this the oldest are dropped. Default 100. */
  maxFinishedTasks?: number;
  /** Longest `wait_task` wait, in seconds. Default 600. */
  maxWaitSeconds?: number;
}

/**
 * Runs tools registered with `background: true` as tasks: the call answers at once with a task
 * id, the tool runs on, its streamed output is kept (bounded) until collected through the
 * `view_task`, `wait_task` and `cancel_task` tools. AgentScope's async execution.
 */
export class BackgroundTasks {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #maxOutputChars: number;
  readonly #maxFinished: number;
  #closed = false;

  constructor(options: BackgroundTaskOptions = {}) {
    this.#maxOutputChars = options.maxOutputChars ?? 200_000;
    this.#maxFinished = options.maxFinishedTasks ?? 100;
  }

  /** Start consuming `stream` as a task; `controller` aborts the tool. */
  start(
    toolName: string,
    controller: AbortController,
    stream: AsyncIterable<ToolResponse>,
  ): TaskSnapshot {
    if (this.#closed)
      throw new ToolExecutionError(
        toolName,
        'The toolkit is closed; no background task can start.',
      );
    const record: TaskRecord = {
      id: `task_${randomUUID().slice(0, 12)}`,
      toolName,
      status: 'running',
      startedAt: new Date(),
      chunks: [],
      bufferedChars: 0,
      droppedChars: 0,
      controller,
      done: Promise.resolve(),
    };
    record.done = (async () => {
      let failed = false;
      try {
        for await (const chunk of stream) {
          if (chunk.isError) failed = true;
          this.#keep(record, chunk);
        }
      } catch (error) {
        failed = true;
        this.#keep(record, {
          content: [textBlock(`Error: ${(error as Error).message}`)],
          isError: true,
        });
      }
      record.finishedAt = new Date();
      if (record.status === 'running')
        record.status = controller.signal.aborted ? 'cancelled' : failed ? 'failed' : 'completed';
      this.#evictFinished();
    })();
    this.#tasks.set(record.id, record);
    return this.#snapshot(record);
  }

  #keep(record: TaskRecord, chunk: ToolResponse): void {
    record.chunks.push(chunk);
    record.bufferedChars += responseText(chunk).length;
    // Keep the newest output: drop the oldest chunks while over budget (keeping at least one).
    while (record.bufferedChars > this.#maxOutputChars && record.chunks.length > 1) {
      const dropped = record.chunks.shift()!;
      const size = responseText(dropped).length;
      record.bufferedChars -= size;
      record.droppedChars += size;
    }
  }

  #evictFinished(): void {
    const finished = [...this.#tasks.values()].filter((task) => task.status !== 'running');
    for (const task of finished.slice(0, Math.max(0, finished.length - this.#maxFinished)))
      this.#tasks.delete(task.id);
  }

  #snapshot(record: TaskRecord): TaskSnapshot {
    return {
      taskId: record.id,
      toolName: record.toolName,
      status: record.status,
      startedAt: record.startedAt.toISOString(),
      ...(record.finishedAt ? { finishedAt: record.finishedAt.toISOString() } : {}),
      output: mergeResponses(record.chunks),
      droppedChars: record.droppedChars,
    };
  }

  /** Ids of the tasks held (running or finished and not yet collected). */
  ids(): string[] {
    return [...this.#tasks.keys()];
  }

  /** The task's state and output so far; a finished task is collected (forgotten) by this. */
  view(taskId: string): TaskSnapshot | undefined {
    const record = this.#tasks.get(taskId);
    if (!record) return undefined;
    const snapshot = this.#snapshot(record);
    if (record.status !== 'running') this.#tasks.delete(taskId);
    return snapshot;
  }

  /** Wait until the task finishes or `timeoutMs` passes, then `view` it. */
  async wait(
    taskId: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<TaskSnapshot | undefined> {
    const record = this.#tasks.get(taskId);
    if (!record) return undefined;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    await Promise.race([
      record.done,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
        onAbort = () => resolve();
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    return this.view(taskId);
  }

  /** Abort the task's tool and wait (briefly) for it to stop. */
  async cancel(taskId: string): Promise<TaskSnapshot | undefined> {
    const record = this.#tasks.get(taskId);
    if (!record) return undefined;
    if (record.status === 'running') {
      record.status = 'cancelled';
      record.controller.abort(
        new ToolExecutionError(record.toolName, 'The background task was cancelled.'),
      );
      await Promise.race([record.done, new Promise((resolve) => setTimeout(resolve, 2000))]);
    }
    return this.view(taskId);
  }

  /** Cancel every running task and forget them all (the toolkit calls this on close). */
  async close(): Promise<void> {
    this.#closed = true;
    const running = [...this.#tasks.values()].filter((task) => task.status === 'running');
    for (const task of running) {
      task.status = 'cancelled';
      task.controller.abort(new ToolExecutionError(task.toolName, 'The toolkit was closed.'));
    }
    await Promise.race([
      Promise.all(running.map((task) => task.done)),
      new Promise((resolve) => setTimeout(resolve, 5000)),
    ]);
    this.#tasks.clear();
  }
}

function describe(snapshot: TaskSnapshot): ToolResponse {
  const header = `Task ${snapshot.taskId} (${snapshot.toolName}): ${snapshot.status}.${
    snapshot.droppedChars > 0
      ? ` The first ${snapshot.droppedChars} characters of output were dropped to save memory.`
      : ''
  }${snapshot.status === 'running' ? ' Output so far:' : ' Output:'}`;
  return {
    content: [textBlock(`${header}\n`), ...snapshot.output.content],
    ...(snapshot.status === 'failed' ? { isError: true } : {}),
    metadata: {
      task: { taskId: snapshot.taskId, status: snapshot.status, toolName: snapshot.toolName },
    },
  };
}

const managers = new WeakMap<Toolkit, BackgroundTasks>();

/** The toolkit's background task manager, if background tasks are enabled. */
export function backgroundTasksOf(toolkit: Toolkit): BackgroundTasks | undefined {
  return managers.get(toolkit);
}

/**
 * Give a toolkit background execution: calls to tools defined with `background: true` return a
 * task id at once, and the `view_task`, `wait_task` and `cancel_task` tools are registered.
 * Tasks are cancelled when the toolkit closes.
 * Idempotent: the toolkit does it itself when the first background tool is registered.
 * @returns the task manager (also useful to inspect tasks from code)
 */
export function enableBackgroundTasks(
  toolkit: Toolkit,
  options: BackgroundTaskOptions = {},
): BackgroundTasks {
  const existing = managers.get(toolkit);
  if (existing) return existing;
  const tasks = new BackgroundTasks(options);
  managers.set(toolkit, tasks);
  const maxWait = options.maxWaitSeconds ?? 600;
  const unknown = (taskId: string) => {
    const known = tasks.ids();
    return new ToolExecutionError(
      'task',
      `There is no task "${taskId}" (it may have been collected already).${known.length ? ` Known tasks: ${known.join(', ')}.` : ''}`,
      {
        code: 'task_not_found',
      },
    );
  };
  const middleware: ToolMiddleware = async function* backgroundTasks(invocation, next) {
    const registered = invocation.tool;
    if (
      !registered?.tool.background ||
      invocation.name !== registered.name ||
      invocation.arguments === undefined
    ) {
      yield* next(invocation);
      return;
    }
    // Report invalid arguments now, not later through wait_task.
    const validation = validateRegistered(registered, invocation.arguments);
    if (!validation.ok) {
      yield* next(invocation);
      return;
    }
    const controller = new AbortController();
    const snapshot = tasks.start(
      registered.name,
      controller,
      next({ ...invocation, context: { ...invocation.context, signal: controller.signal } }),
    );
    yield {
      content: [
        textBlock(
          `Started background task ${snapshot.taskId} for ${registered.name}. It keeps running; call wait_task to get its result, view_task to see its progress, or cancel_task to stop it.`,
        ),
      ],
      metadata: { task: { taskId: snapshot.taskId, status: 'running', toolName: registered.name } },
      isLast: true,
    };
  };
  toolkit.use(middleware);
  const taskId = z.string().describe('The task id returned when the task started');
  toolkit.register(
    defineTool({
      name: 'view_task',
      description: {
        en: 'See the status and output so far of a background task.',
        zh: '查看后台任务的状态和目前的输出。',
      },
      parameters: z.object({ task_id: taskId }),
      execute: ({ task_id }) => {
        const snapshot = tasks.view(task_id);
        if (!snapshot) throw unknown(task_id);
        return describe(snapshot);
      },
    }),
  );
  toolkit.register(
    defineTool({
      name: 'wait_task',
      description: {
        en: 'Wait for a background task to finish (up to timeout_seconds) and get its output.',
        zh: '等待后台任务完成（最多 timeout_seconds 秒）并获取其输出。',
      },
      parameters: z.object({
        task_id: taskId,
        timeout_seconds: z
          .number()
          .min(0)
          .max(maxWait)
          .default(30)
          .describe('How long to wait at most'),
      }),
      timeoutMs: (maxWait + 5) * 1000,
      execute: async ({ task_id, timeout_seconds }, context) => {
        const snapshot = await tasks.wait(task_id, timeout_seconds * 1000, context.signal);
        if (!snapshot) throw unknown(task_id);
        return describe(snapshot);
      },
    }),
  );
  toolkit.register(
    defineTool({
      name: 'cancel_task',
      description: { en: 'Stop a running background task.', zh: '停止正在运行的后台任务。' },
      parameters: z.object({ task_id: taskId }),
      execute: async ({ task_id }) => {
        const snapshot = await tasks.cancel(task_id);
        if (!snapshot) throw unknown(task_id);
        return describe(snapshot);
      },
    }),
  );
  toolkit.onClose(() => tasks.close());
  return tasks;
}
