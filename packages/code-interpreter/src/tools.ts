import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { ContentBlock, ToolContext, ToolResponse } from '@quiver/core';
import { defineTool, type Tool } from '@quiver/core-registry';
import { z } from 'zod';
import {
  CodeInterpreter,
  type CodeInterpreterOptions,
  type RunResult,
} from './code-interpreter.js';

/** Key in `ToolContext.state` under which the code_interpreter tool keeps its session id. */
export const SESSION_STATE_KEY = 'quiver.codeInterpreter.sessionId';

let defaultInterpreter: CodeInterpreter | undefined;

/**
 * The interpreter shared by the default tools, created on first use with default options.
 * Close it with {@link closeDefaultCodeInterpreter} (kernels are also killed when Node exits).
 */
export function getDefaultCodeInterpreter(): CodeInterpreter {
  defaultInterpreter ??= new CodeInterpreter();
  return defaultInterpreter;
}

/** Close the shared interpreter of the default tools, if one was created. */
export async function closeDefaultCodeInterpreter(): Promise<void> {
  const interpreter = defaultInterpreter;
  defaultInterpreter = undefined;
  await interpreter?.close();
}

/** Options of the tool factories: an interpreter to use, or options to create one. */
export interface CodeToolOptions {
  /** The interpreter to run code in (default: the shared one from {@link getDefaultCodeInterpreter}). */
  interpreter?: CodeInterpreter;
  /** Options for a new interpreter owned by the tool (ignored when `interpreter` is given). */
  interpreterOptions?: CodeInterpreterOptions;
  /** Toolkit time limit of a call in ms (default: the longest allowed run plus 60 s, so the kernel is interrupted or restarted first). */
  timeoutMs?: number;
}

/** Longest run a model may ask for with `timeout_seconds`. */
const MAX_TIMEOUT_SECONDS = 600;

/**
 * The toolkit's time limit is only a backstop: a run always ends by its own timeout, interrupt
 * grace and restart, which this leaves room for.
 */
function toolTimeoutMs(options: CodeToolOptions): number {
  if (options.timeoutMs !== undefined) return options.timeoutMs;
  const runTimeout =
    options.interpreter?.options.timeoutMs ?? options.interpreterOptions?.timeoutMs ?? 60_000;
  return Math.max(runTimeout, MAX_TIMEOUT_SECONDS * 1000) + 60_000;
}

const parameters = z.object({
  code: z.string().min(1).describe('Python source code to run. 要运行的 Python 代码。'),
  files: z
    .array(z.string())
    .optional()
    .describe('Local files to copy into the working directory first. 先复制到工作目录的本地文件。'),
  timeout_seconds: z
    .number()
    .positive()
    .max(MAX_TIMEOUT_SECONDS)
    .optional()
    .describe('Stop the code after this many seconds (default 60). 运行超时秒数（默认 60）。'),
});

type Arguments = z.infer<typeof parameters>;

function resolveInterpreter(options: CodeToolOptions): () => CodeInterpreter {
  if (options.interpreter) return () => options.interpreter!;
  if (options.interpreterOptions) {
    const own = new CodeInterpreter(options.interpreterOptions);
    return () => own;
  }
  return getDefaultCodeInterpreter;
}

/** The final chunk of a call: what was not streamed yet, with status and files in metadata. */
function finalChunk(result: RunResult, streamedAnything: boolean): ToolResponse {
  const content = [...result.tail];
  if (!streamedAnything && content.length === 0) {
    content.push({ type: 'text', text: '(no output)' });
  }
  return {
    content,
    ...(result.status === 'ok' ? {} : { isError: true }),
    metadata: {
      sessionId: result.sessionId,
      status: result.status,
      executionCount: result.executionCount,
      truncated: result.truncated,
      createdFiles: result.createdFiles,
      stateLost: result.stateLost,
      workDir: result.workDir,
      durationMs: result.durationMs,
      ...(result.error ? { error: result.error.toJSON() } : {}),
    },
  };
}

/**
 * Run the interpreter and yield output as it arrives: text increments and images (coalesced a
 * few milliseconds), then the final chunk.
 */
async function* streamRun(
  interpreter: CodeInterpreter,
  args: Arguments,
  context: ToolContext,
  sessionId: string,
): AsyncGenerator<ToolResponse, ToolResponse, undefined> {
  const queue: ContentBlock[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  const run = interpreter
    .run({
      code: args.code,
      sessionId,
      // Relative paths are relative to the conversation's work dir, when there is one.
      ...(args.files
        ? { files: args.files.map((file) => resolve(context.workDir ?? process.cwd(), file)) }
        : {}),
      ...(args.timeout_seconds ? { timeoutMs: Math.round(args.timeout_seconds * 1000) } : {}),
      signal: context.signal,
      onContent: (blocks) => {
        queue.push(...blocks);
        wake?.();
      },
    })
    .finally(() => {
      finished = true;
      wake?.();
    });
  run.catch(() => undefined);
  let streamedAnything = false;
  while (!finished || queue.length > 0) {
    if (queue.length === 0) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
      continue;
    }
    // Coalesce bursts of small prints into one chunk.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const blocks = queue.splice(0);
    streamedAnything = true;
    yield { content: blocks };
  }
  const result = await run;
  return finalChunk(result, streamedAnything);
}

const CODE_INTERPRETER_DESCRIPTION = {
  en: 'Run Python code in a persistent Jupyter (IPython) kernel and get its output. Variables, imports and files persist across calls in this conversation. numpy, pandas and matplotlib are available; charts are returned as images (Chinese labels render). Print what you want to see; the value of the last expression is shown. Files you create in the working directory are listed. No network access when sandboxed.',
  zh: '在持久的 Jupyter（IPython）内核中运行 Python 代码并返回输出。本次对话中的变量、导入和文件在多次调用间保留。可用 numpy、pandas、matplotlib；图表以图片返回（支持中文标签）。用 print 输出想看的内容，最后一个表达式的值会显示。在工作目录中创建的文件会被列出。沙箱模式下无网络访问。',
};

const PYTHON_EXECUTOR_DESCRIPTION = {
  en: 'Run a self-contained Python script once in a fresh interpreter and return its output (stdout, the last expression, errors, charts as images). Nothing persists between calls: include all imports and data in the code.',
  zh: '在全新的解释器中一次性运行独立的 Python 脚本，返回输出（标准输出、最后一个表达式、错误、以图片返回的图表）。调用之间不保留任何状态：代码中需包含所有导入和数据。',
};

/**
 * The `code_interpreter` tool: stateful Python in a kernel per conversation (the session id is
 * kept in `context.state`), output streamed as it is produced.
 *
 * @example
 * const toolkit = new Toolkit();
 * toolkit.register(createCodeInterpreterTool({ interpreter: new CodeInterpreter() }));
 * const response = await toolkit.callToCompletion({ id: 'c1', name: 'code_interpreter', arguments: '{"code":"print(6*7)"}' });
 */
export function createCodeInterpreterTool(options: CodeToolOptions = {}): Tool<Arguments> {
  const interpreter = resolveInterpreter(options);
  return defineTool({
    name: 'code_interpreter',
    description: CODE_INTERPRETER_DESCRIPTION,
    parameters,
    flags: { codeExecution: true, fileAccess: true, sideEffects: true },
    timeoutMs: toolTimeoutMs(options),
    execute(args: Arguments, context: ToolContext) {
      const key = context.namespace
        ? `${SESSION_STATE_KEY}:${context.namespace}`
        : SESSION_STATE_KEY;
      let sessionId = context.state.get(key);
      if (typeof sessionId !== 'string') {
        sessionId = `${context.namespace ?? 'main'}-${Math.random().toString(36).slice(2, 10)}${Date.now().toString(36)}`;
        context.state.set(key, sessionId);
      }
      return streamRun(interpreter(), args, context, sessionId as string);
    },
  });
}

/**
 * The `python_executor` tool: one-shot, stateless Python (a fresh kernel from the warm pool per
 * call, closed afterwards).
 */
export function createPythonExecutorTool(options: CodeToolOptions = {}): Tool<Arguments> {
  const interpreter = resolveInterpreter(options);
  return defineTool({
    name: 'python_executor',
    description: PYTHON_EXECUTOR_DESCRIPTION,
    parameters,
    flags: { codeExecution: true, fileAccess: true },
    timeoutMs: toolTimeoutMs(options),
    async *execute(args: Arguments, context: ToolContext) {
      const target = interpreter();
      const sessionId = `oneshot-${randomUUID()}`;
      try {
        return yield* streamRun(target, args, context, sessionId);
      } finally {
        // Also when the run failed or the caller stopped reading: one-shot sessions never linger.
        void target.closeSession(sessionId).catch(() => undefined);
      }
    },
  });
}

/** `code_interpreter` on the shared default interpreter. */
export const codeInterpreterTool: Tool<Arguments> = createCodeInterpreterTool();

/** `python_executor` on the shared default interpreter. */
export const pythonExecutorTool: Tool<Arguments> = createPythonExecutorTool();
