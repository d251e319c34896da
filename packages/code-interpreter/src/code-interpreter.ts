import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, readdir, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import { mkdirSync, mkdtempSync } from 'node:fs';
import {
  ConfigurationError,
  type ContentBlock,
  type Logger,
  type QuiverError,
  ToolAbortedError,
  silentLogger,
} from '@quiver/core';
import {
  ExecutionTimeoutError,
  FileNotAllowedError,
  InterpreterClosedError,
  KernelLimitError,
  PythonExceptionError,
} from './errors.js';
import { type ExecutionStatus, Kernel, type OutputItem } from './kernel.js';
import { OutputCollector } from './output-format.js';
import { type PythonInfo, findPython } from './python-discovery.js';
import { type SandboxMode, type SandboxStatus, detectSandbox } from './sandbox.js';

/** Options of {@link CodeInterpreter}. Every field is optional. */
export interface CodeInterpreterOptions {
  /** Python to run (default: the first that can import ipykernel; see `findPython`). */
  python?: string;
  /** `auto` (default): bubblewrap when it works here, else unsandboxed. `bubblewrap` fails when unavailable. */
  sandbox?: SandboxMode;
  /** Directory holding session directories (default `<tmpdir>/quiver-ci-<uid>`). Keep it short: ipc socket paths must fit in 107 bytes. */
  workRoot?: string;
  /** Pre-started kernels waiting for new sessions (default 1). */
  poolSize?: number;
  /** Most kernel processes alive at once, pool included (default 8). */
  maxKernels?: number;
  /** Close sessions idle this long (default 15 minutes). */
  sessionTtlMs?: number;
  /** Per-run time limit (default 60 000 ms); the kernel is interrupted at it. */
  timeoutMs?: number;
  /** How long an interrupt may take before the kernel is restarted (default 2000 ms). */
  interruptGraceMs?: number;
  /** RLIMIT_AS of each kernel in MiB (default 4096; below ~2048 numpy/pandas break). 0 disables. */
  memoryLimitMb?: number;
  /** RLIMIT_CPU of each kernel in CPU seconds over its whole life (default 3600). 0 disables. */
  cpuTimeLimitSeconds?: number;
  /** RLIMIT_NPROC of each kernel (per-user count; root is exempt). Default: unset. */
  maxProcesses?: number;
  /** Characters of text output kept per run before the truncation marker (default 20 000). */
  outputLimitChars?: number;
  /** Images kept per run (default 10). */
  maxImages?: number;
  /** Put base64 image data in image blocks, besides the saved file (default true). */
  inlineImages?: boolean;
  /** Directories that files named in a call may come from (default: the current directory). */
  allowedRoots?: string[];
  /** Extra environment variables for kernels (Node's own environment is not passed on). */
  env?: Record<string, string>;
  /** Give up starting a kernel after this long (default 30 000 ms). */
  startupTimeoutMs?: number;
  /** Delete a session's directory when it closes (default true). */
  removeWorkDirs?: boolean;
  logger?: Logger;
}

/** What {@link CodeInterpreter.start} found. */
export interface CodeInterpreterInfo {
  python: PythonInfo;
  sandbox: SandboxStatus;
  workRoot: string;
}

/** Options of {@link CodeInterpreter.run}. */
export interface RunOptions {
  code: string;
  /** Session to run in; created when new. Omit for a fresh session (see `result.sessionId`). */
  sessionId?: string;
  /** Files (within `allowedRoots`) copied into the session's work dir before the code runs. */
  files?: string[];
  /** Per-run time limit, overriding the interpreter's. */
  timeoutMs?: number;
  /** Aborting interrupts the run. */
  signal?: AbortSignal;
  /** Receives content blocks as the code produces them (text increments, images). */
  onContent?: (blocks: ContentBlock[]) => void;
}

/** The outcome of a run. Runs never throw for problems in the code or the kernel: see `status`. */
export interface RunResult {
  sessionId: string;
  status: ExecutionStatus;
  /** Everything the run produced (text, images, the traceback, the list of created files). */
  content: ContentBlock[];
  /** The final blocks not yet passed to `onContent` (the traceback, created files, markers). */
  tail: ContentBlock[];
  executionCount: number | null;
  /** Output was cut at `outputLimitChars` (or images at `maxImages`). */
  truncated: boolean;
  /** Files the code created or changed in the work dir (absolute paths). */
  createdFiles: string[];
  /** The kernel was restarted or died: variables and imports are gone. */
  stateLost: boolean;
  /** Set when status is not `ok`. */
  error?: QuiverError;
  workDir: string;
  durationMs: number;
}

interface KernelSlot {
  root: string;
  workDir: string;
  kernel: Promise<Kernel>;
}

interface Session {
  id: string;
  root: string;
  workDir: string;
  kernel: Promise<Kernel> | undefined;
  queue: Promise<unknown>;
  activeRuns: number;
  lastUsed: number;
  imageNumber: number;
  /** Said once, on the next run: why earlier state is gone. */
  notice?: string;
}

const DEFAULTS = {
  poolSize: 1,
  maxKernels: 8,
  sessionTtlMs: 15 * 60_000,
  timeoutMs: 60_000,
  interruptGraceMs: 2000,
  memoryLimitMb: 4096,
  cpuTimeLimitSeconds: 3600,
  outputLimitChars: 20_000,
  maxImages: 10,
};

/**
 * Runs Python for LLM agents in real IPython kernels: one kernel per session (state persists
 * across calls), a warm pool so new sessions start instantly, idle sessions reaped after a TTL,
 * a cap on live kernels, per-session queueing, timeouts by interrupt, and bubblewrap sandboxing
 * where available.
 *
 * @example
 * const interpreter = new CodeInterpreter();
 * const first = await interpreter.run({ code: 'import math\nr = math.sqrt(2)' });
 * const second = await interpreter.run({ sessionId: first.sessionId, code: 'print(round(r, 3))' });
 * console.log(second.content); // [{ type: 'text', text: '1.414\n' }]
 * await interpreter.close();
 */
export class CodeInterpreter {
  readonly options: Readonly<CodeInterpreterOptions>;
  readonly #logger: Logger;
  readonly #sessions = new Map<string, Session>();
  readonly #pool: KernelSlot[] = [];
  #ready: Promise<CodeInterpreterInfo> | undefined;
  #info: CodeInterpreterInfo | undefined;
  #reaper: NodeJS.Timeout | undefined;
  /** Sessions closed by the TTL reaper (bounded), so a later run can say its state is gone. */
  readonly #expired = new Set<string>();
  #closed = false;

  constructor(options: CodeInterpreterOptions = {}) {
    this.options = { ...options };
    this.#logger = options.logger ?? silentLogger;
  }

  /** Number of kernel processes alive or starting (sessions and pool). */
  get liveKernels(): number {
    let count = this.#pool.length;
    for (const session of this.#sessions.values()) if (session.kernel) count += 1;
    return count;
  }

  /** What {@link CodeInterpreter.start} found (Python, sandbox mode and why), once it has run. */
  get info(): CodeInterpreterInfo | undefined {
    return this.#info;
  }

  /** Ids of the open sessions. */
  get sessionIds(): string[] {
    return [...this.#sessions.keys()];
  }

  /** Kernels waiting in the warm pool (ready or starting). */
  get pooledKernels(): number {
    return this.#pool.length;
  }

  /**
   * Find Python, detect the sandbox, and fill the warm pool. Called by the first run; call it
   * yourself to pay the start-up cost early and to learn the sandbox mode.
   * @throws {ConfigurationError} when no Python with ipykernel is found, or `sandbox: 'bubblewrap'` cannot work here.
   */
  start(): Promise<CodeInterpreterInfo> {
    if (this.#closed) return Promise.reject(new InterpreterClosedError());
    this.#ready ??= (async () => {
      const [python, detected] = await Promise.all([
        findPython(this.options.python ? { python: this.options.python } : {}),
        detectSandbox(),
      ]);
      const requested = this.options.sandbox ?? 'auto';
      if (requested === 'bubblewrap' && detected.mode !== 'bubblewrap') {
        throw new ConfigurationError(
          `sandbox: 'bubblewrap' was requested but ${detected.reason} Install bubblewrap, or use sandbox: 'auto' or 'none'.`,
        );
      }
      const sandbox: SandboxStatus =
        requested === 'none'
          ? {
              ...detected,
              mode: 'none',
              reason:
                'Sandboxing turned off (sandbox: "none"); kernels run as plain child processes.',
            }
          : detected;
      const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
      const workRoot = resolve(this.options.workRoot ?? join(tmpdir(), `quiver-ci-${uid}`));
      await mkdir(workRoot, { recursive: true, mode: 0o700 });
      this.#info = { python, sandbox, workRoot };
      this.#logger.info?.(
        `code-interpreter: python ${python.executable}; sandbox: ${sandbox.reason}`,
      );
      this.#fillPool();
      this.#startReaper();
      return this.#info;
    })();
    return this.#ready;
  }

  /**
   * Run code in a session (created on first use). Runs of one session are queued and run in
   * order; different sessions run in parallel.
   * @throws {KernelLimitError} when a new session needs a kernel and `maxKernels` are alive.
   * @throws {FileNotAllowedError} when a file is outside `allowedRoots` or not a regular file.
   * @throws {KernelStartError} when a kernel cannot be started.
   */
  async run(options: RunOptions): Promise<RunResult> {
    await this.start();
    if (this.#closed) throw new InterpreterClosedError();
    // Check files before taking a kernel, so a refused call costs nothing.
    const files = await this.#checkFiles(options.files ?? []);
    const session = await this.#session(options.sessionId ?? randomUUID());
    session.activeRuns += 1;
    session.lastUsed = Date.now();
    const job = session.queue.then(() => this.#runInSession(session, options, files));
    session.queue = job.catch(() => undefined);
    try {
      return await job;
    } finally {
      session.activeRuns -= 1;
      session.lastUsed = Date.now();
    }
  }

  /**
   * Open a session ahead of its first run (taking a kernel from the warm pool when one is
   * ready) and wait until its kernel is ready.
   * @returns the session id.
   * @throws {KernelLimitError} when `maxKernels` are alive.
   * @throws {KernelStartError} when the kernel cannot be started.
   */
  async openSession(sessionId: string = randomUUID()): Promise<string> {
    await this.start();
    if (this.#closed) throw new InterpreterClosedError();
    const session = await this.#session(sessionId);
    await session.kernel;
    return sessionId;
  }

  /** The work directory of a session, if it exists. */
  workDir(sessionId: string): string | undefined {
    return this.#sessions.get(sessionId)?.workDir;
  }

  /** Shut a session's kernel down and (by default) delete its directory. */
  async closeSession(sessionId: string): Promise<void> {
    const session = this.#sessions.get(sessionId);
    if (!session) return;
    this.#sessions.delete(sessionId);
    await session.queue;
    const kernel = await session.kernel?.catch(() => undefined);
    session.kernel = undefined;
    await kernel?.shutdown();
    if (this.options.removeWorkDirs !== false)
      await rm(session.root, { recursive: true, force: true });
    this.#fillPool();
  }

  /** Shut every kernel down (pool included), stop the reaper, delete session directories. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#reaper) clearInterval(this.#reaper);
    await this.#ready?.catch(() => undefined);
    const sessions = [...this.#sessions.keys()];
    await Promise.all(sessions.map((id) => this.closeSession(id)));
    const slots = this.#pool.splice(0);
    await Promise.all(
      slots.map(async (slot) => {
        const kernel = await slot.kernel.catch(() => undefined);
        await kernel?.shutdown();
        await rm(slot.root, { recursive: true, force: true });
      }),
    );
  }

  async #session(id: string): Promise<Session> {
    const existing = this.#sessions.get(id);
    if (existing) return existing;
    let slot = this.#pool.shift();
    if (!slot) {
      if (this.liveKernels >= this.#maxKernels) throw new KernelLimitError(this.#maxKernels);
      slot = this.#newSlot();
    }
    const session: Session = {
      id,
      root: slot.root,
      workDir: slot.workDir,
      kernel: slot.kernel,
      queue: Promise.resolve(),
      activeRuns: 0,
      lastUsed: Date.now(),
      imageNumber: 0,
    };
    if (this.#expired.delete(id)) {
      session.notice = `Note: session "${id}" was closed after being idle longer than ${Math.round((this.options.sessionTtlMs ?? DEFAULTS.sessionTtlMs) / 1000)} s; this code ran in a new session, so earlier variables and files are gone.`;
    }
    // A kernel that fails to start is reported by the run that awaits it.
    slot.kernel.catch(() => undefined);
    this.#sessions.set(id, session);
    this.#fillPool();
    return session;
  }

  /** A new session directory with a kernel starting in it (synchronous, so the slot counts at once). */
  #newSlot(): KernelSlot {
    const root = mkdtempSync(join(this.#info!.workRoot, 's-'));
    const workDir = join(root, 'work');
    mkdirSync(workDir, { recursive: true });
    return { root, workDir, kernel: this.#startKernel(root, workDir) };
  }

  get #maxKernels(): number {
    return this.options.maxKernels ?? DEFAULTS.maxKernels;
  }

  #startKernel(root: string, workDir: string): Promise<Kernel> {
    const info = this.#info!;
    const options = this.options;
    return Kernel.start({
      python: info.python,
      sandbox: info.sandbox.mode,
      ...(info.sandbox.bubblewrapPath ? { bubblewrapPath: info.sandbox.bubblewrapPath } : {}),
      sessionRoot: root,
      workDir,
      memoryLimitMb: options.memoryLimitMb ?? DEFAULTS.memoryLimitMb,
      cpuTimeLimitSeconds: options.cpuTimeLimitSeconds ?? DEFAULTS.cpuTimeLimitSeconds,
      ...(options.maxProcesses ? { maxProcesses: options.maxProcesses } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.startupTimeoutMs ? { startupTimeoutMs: options.startupTimeoutMs } : {}),
      logger: this.#logger,
    });
  }

  #fillPool(): void {
    if (this.#closed || !this.#info) return;
    const target = this.options.poolSize ?? DEFAULTS.poolSize;
    while (this.#pool.length < target && this.liveKernels < this.#maxKernels) {
      const slot = this.#newSlot();
      slot.kernel.catch((error: unknown) => {
        this.#logger.warn?.(`code-interpreter: a pooled kernel failed to start: ${String(error)}`);
        const index = this.#pool.indexOf(slot);
        if (index >= 0) this.#pool.splice(index, 1);
      });
      this.#pool.push(slot);
    }
  }

  #startReaper(): void {
    const ttl = this.options.sessionTtlMs ?? DEFAULTS.sessionTtlMs;
    if (!(ttl > 0) || !Number.isFinite(ttl)) return;
    this.#reaper = setInterval(
      () => {
        const now = Date.now();
        for (const session of this.#sessions.values()) {
          if (session.activeRuns === 0 && now - session.lastUsed > ttl) {
            this.#logger.info?.(`code-interpreter: closing idle session ${session.id}`);
            this.#expired.add(session.id);
            if (this.#expired.size > 1000)
              this.#expired.delete(this.#expired.values().next().value!);
            void this.closeSession(session.id);
          }
        }
      },
      Math.max(50, Math.min(ttl / 2, 30_000)),
    );
    this.#reaper.unref();
  }

  async #runInSession(session: Session, options: RunOptions, files: string[]): Promise<RunResult> {
    const started = Date.now();
    if (this.#closed) throw new InterpreterClosedError();
    if (!session.kernel) {
      // The previous kernel died or was restarted: a fresh one serves this call.
      session.kernel = this.#startKernel(session.root, session.workDir);
    }
    let kernel: Kernel;
    try {
      kernel = await session.kernel;
    } catch (error) {
      session.kernel = undefined;
      throw error;
    }
    let notice = session.notice;
    session.notice = undefined;
    if (!kernel.alive) {
      notice = `Note: the session's previous kernel died since the last call (${kernel.death?.signal ?? `exit code ${kernel.death?.exitCode ?? '?'}`}); this code ran in a fresh kernel, so earlier variables and imports are gone.`;
      session.kernel = this.#startKernel(session.root, session.workDir);
      kernel = await session.kernel;
    }
    for (const file of files) await copyFile(file, join(session.workDir, basename(file)));
    const before = await snapshot(session.workDir);

    const collector = new OutputCollector({
      workDir: session.workDir,
      maxChars: this.options.outputLimitChars ?? DEFAULTS.outputLimitChars,
      maxImages: this.options.maxImages ?? DEFAULTS.maxImages,
      inlineImages: this.options.inlineImages ?? true,
      nextImageNumber: () => ++session.imageNumber,
    });
    const streamed: ContentBlock[] = [];
    const onOutput = options.onContent
      ? (item: OutputItem) => {
          collector.push(item);
          if (item.type === 'error') return;
          const blocks = collector.drain();
          if (blocks.length > 0) {
            streamed.push(...blocks);
            options.onContent!(blocks);
          }
        }
      : (item: OutputItem) => collector.push(item);

    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? DEFAULTS.timeoutMs;
    const maxChars = this.options.outputLimitChars ?? DEFAULTS.outputLimitChars;
    const execution = await kernel.execute(options.code, {
      timeoutMs,
      onOutput,
      // Keep raw bytes well past the character cap (images are large), never unbounded.
      maxOutputBytes: Math.max(4 * maxChars, 16 * 1024 * 1024),
      interruptGraceMs: this.options.interruptGraceMs ?? DEFAULTS.interruptGraceMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    collector.addDroppedBytes(execution.droppedOutputBytes);
    if (execution.stateLost || !kernel.alive) {
      session.kernel = undefined;
      // Restart right away so the next call does not wait for a cold start.
      if (!this.#closed && this.#sessions.has(session.id)) {
        session.kernel = this.#startKernel(session.root, session.workDir);
        session.kernel.catch(() => undefined);
      }
    }

    const after = await snapshot(session.workDir);
    const createdFiles = [...after.entries()]
      .filter(
        ([path, signature]) => before.get(path) !== signature && !collector.savedFiles.has(path),
      )
      .map(([path]) => path)
      .sort();

    const tail = collector.drain();
    let error: QuiverError | undefined;
    switch (execution.status) {
      case 'error': {
        const item = execution.outputs.find((output) => output.type === 'error');
        error = new PythonExceptionError(
          item?.type === 'error' ? item.ename : 'Error',
          item?.type === 'error' ? item.evalue : '',
        );
        break;
      }
      case 'timeout':
        error = new ExecutionTimeoutError(timeoutMs, execution.stateLost);
        break;
      case 'died':
        error = execution.death;
        break;
      case 'cancelled':
        error = new ToolAbortedError('code_interpreter');
        break;
      case 'aborted': {
        error = new PythonExceptionError(
          'Aborted',
          'the kernel refused the request after an earlier error; run it again',
        );
        break;
      }
      default:
        break;
    }
    const trailer: string[] = notice ? [notice] : [];
    if (collector.truncated) {
      const parts = [];
      if (collector.omittedChars > 0) parts.push(`${collector.omittedChars} more characters`);
      if (collector.omittedImages > 0) parts.push(`${collector.omittedImages} more images`);
      trailer.push(`[output truncated: ${parts.join(' and ')} not shown]`);
    }
    if (collector.errorText) trailer.push(collector.errorText);
    if (error && execution.status !== 'error') trailer.push(`Error: ${error.message}`);
    if (createdFiles.length > 0) {
      trailer.push(
        `Files created or changed:\n${createdFiles.map((path) => `- ${path}`).join('\n')}`,
      );
    }
    const lastText = [...streamed, ...tail].at(-1);
    const needsNewline = lastText?.type === 'text' && !lastText.text.endsWith('\n');
    if (trailer.length > 0)
      tail.push({ type: 'text', text: `${needsNewline ? '\n' : ''}${trailer.join('\n')}\n` });
    for (const path of createdFiles)
      tail.push({ type: 'file', path, name: relative(session.workDir, path) });

    return {
      sessionId: session.id,
      status: execution.status,
      content: [...streamed, ...tail],
      tail,
      executionCount: execution.executionCount,
      truncated: collector.truncated,
      createdFiles,
      stateLost: execution.stateLost || notice !== undefined,
      ...(error ? { error } : {}),
      workDir: session.workDir,
      durationMs: Date.now() - started,
    };
  }

  /** Resolve (symlinks included) and check the files named in a call; returns their real paths. */
  async #checkFiles(files: string[]): Promise<string[]> {
    if (files.length === 0) return [];
    const checked: string[] = [];
    const roots = await Promise.all(
      (this.options.allowedRoots ?? [process.cwd()]).map((root) =>
        realpath(root).catch(() => resolve(root)),
      ),
    );
    for (const file of files) {
      let real: string;
      try {
        real = await realpath(resolve(file));
      } catch {
        throw new FileNotAllowedError(file, 'it does not exist.');
      }
      const inside = roots.some((root) => {
        const path = relative(root, real);
        return path === '' || (!path.startsWith('..') && !isAbsolute(path));
      });
      if (!inside) {
        throw new FileNotAllowedError(
          file,
          `it is outside the allowed roots (${roots.join(', ')}). Name a file under them, or add its directory to allowedRoots.`,
        );
      }
      if (!(await stat(real)).isFile())
        throw new FileNotAllowedError(file, 'it is not a regular file.');
      checked.push(real);
    }
    return checked;
  }
}

/** path -> "mtime:size" of the files under `directory` (at most 2000, 6 levels deep). */
async function snapshot(directory: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (path: string, depth: number): Promise<void> => {
    if (depth > 6 || files.size >= 2000) return;
    let entries;
    try {
      entries = await readdir(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) {
        if (entry.name === '__pycache__' || entry.name === '.ipynb_checkpoints') continue;
        await walk(full, depth + 1);
      } else if (entry.isFile()) {
        const info = await stat(full).catch(() => undefined);
        if (info) files.set(full, `${info.mtimeMs}:${info.size}`);
      }
      if (files.size >= 2000) return;
    }
  };
  await walk(directory, 0);
  return files;
}
