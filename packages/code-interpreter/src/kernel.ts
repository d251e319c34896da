import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type Logger, silentLogger } from '@quiver/core';
import { Dealer, Subscriber } from 'zeromq';
import { InterpreterClosedError, KernelDiedError, KernelStartError } from './errors.js';
import {
  type JupyterMessage,
  type MessageHeader,
  MessageSigner,
  type RawMessage,
  encodeMessage,
  parseHeaders,
  verifyFrames,
} from './jupyter-protocol.js';
import {
  KERNEL_BOOTSTRAP,
  KERNEL_PORT_TAKEN_EXIT,
  ensureFontCache,
  kernelEnvironment,
  prepareKernelHome,
} from './kernel-environment.js';
import {
  killKernelProcessGroup,
  registerKernelProcess,
  unregisterKernelProcess,
} from './process-reaper.js';
import type { PythonInfo } from './python-discovery.js';
import { bubblewrapArguments } from './sandbox.js';

/** One piece of output produced by a run, in the order the kernel published it. */
export type OutputItem =
  | { type: 'stream'; name: 'stdout' | 'stderr'; text: string }
  | { type: 'display'; data: Record<string, unknown>; isResult: boolean }
  | { type: 'error'; ename: string; evalue: string; traceback: string[] };

/** How a run ended. */
export type ExecutionStatus = 'ok' | 'error' | 'aborted' | 'timeout' | 'cancelled' | 'died';

/** Outcome of {@link Kernel.execute}. */
export interface KernelExecution {
  status: ExecutionStatus;
  outputs: OutputItem[];
  /** IPython's `In [n]` counter, when the kernel replied. */
  executionCount: number | null;
  /** Output bytes discarded because the run exceeded `maxOutputBytes`. */
  droppedOutputBytes: number;
  /** For `timeout`/`cancelled`: the interrupt did not take and the kernel was killed. */
  stateLost: boolean;
  /** For `died`: why. */
  death?: KernelDiedError;
}

/** Options of {@link Kernel.execute}. */
export interface KernelExecuteOptions {
  /** Interrupt the run after this many milliseconds. */
  timeoutMs?: number;
  /** Aborting interrupts the run (status `cancelled`). */
  signal?: AbortSignal;
  /** Called for each output as it arrives (for streaming). */
  onOutput?: (item: OutputItem) => void;
  /** Stop keeping output past this many bytes (default 4 MiB); the rest is only counted. */
  maxOutputBytes?: number;
  /** How long an interrupt may take before the kernel is killed (default 2000 ms). */
  interruptGraceMs?: number;
}

/** Options of {@link Kernel.start}. */
export interface KernelOptions {
  python: PythonInfo;
  /** `bubblewrap` needs {@link KernelOptions.bubblewrapPath}. */
  sandbox: 'bubblewrap' | 'none';
  bubblewrapPath?: string;
  /** Private directory of this kernel (home, sockets); created if missing, removed on shutdown when `ownsRoot`. */
  sessionRoot: string;
  /** The kernel's working directory (inside or outside `sessionRoot`); must exist. */
  workDir: string;
  /** `ipc` is forced in the sandbox (no shared network namespace). Default `tcp` otherwise. */
  transport?: 'tcp' | 'ipc';
  /** RLIMIT_AS in MiB. Below ~2048 numpy/pandas imports break. */
  memoryLimitMb?: number;
  /** RLIMIT_CPU in seconds: a lifetime budget of the kernel process, not a per-run timeout. */
  cpuTimeLimitSeconds?: number;
  /** RLIMIT_NPROC (counted per user; does not bind root). */
  maxProcesses?: number;
  /** Extra environment variables for the kernel. */
  env?: Record<string, string>;
  /** Give up starting after this many milliseconds (default 30 000). */
  startupTimeoutMs?: number;
  /** Heartbeat period (default 1000 ms); the kernel is declared dead after `heartbeatTimeoutMs` (default 10 000) of silence. */
  heartbeatIntervalMs?: number;
  heartbeatTimeoutMs?: number;
  logger?: Logger;
}

interface PendingExecution {
  replied: boolean;
  idle: boolean;
  reply?: Record<string, unknown>;
  outputs: OutputItem[];
  keptBytes: number;
  droppedBytes: number;
  maxOutputBytes: number;
  onOutput?: ((item: OutputItem) => void) | undefined;
  settle: () => void;
  fail: (error: KernelDiedError) => void;
}

/** How long to wait for iopub `idle` once the shell reply is in. */
const IDLE_GRACE_MS = 3000;

const SOCKET_NAMES = ['shell', 'iopub', 'stdin', 'control', 'hb'] as const;
type SocketName = (typeof SOCKET_NAMES)[number];

/**
 * Serialises sends on one socket: zeromq 6 rejects a `send()` with EBUSY while a previous one is
 * still pending, so each socket gets a queue.
 */
class SendQueue {
  #tail: Promise<unknown> = Promise.resolve();
  constructor(private readonly socket: Dealer) {}

  send(frames: Buffer[]): Promise<void> {
    const next = this.#tail.then(() => this.socket.send(frames));
    this.#tail = next.catch(() => undefined);
    return next;
  }
}

/** How many times a kernel is started on new ports when another process took one of its ports. */
const PORT_ATTEMPTS = 3;

async function freePorts(count: number): Promise<number[]> {
  // Hold all listeners open together so the ports are distinct, then release them for the kernel.
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = createServer();
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return server;
    }),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** @internal How a kernel's free TCP ports are found (a test replaces it to hand out a taken one). */
export const kernelPorts = { find: freePorts };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * One IPython kernel (ipykernel) process, driven over ZeroMQ with the Jupyter messaging protocol
 * 5.3: HMAC-SHA256-signed messages on the shell, iopub, stdin, control and heartbeat channels.
 * A kernel is single-use: after it dies or is shut down, start a new one.
 *
 * @example
 * const kernel = await Kernel.start({ python: await findPython(), sandbox: 'none', sessionRoot, workDir });
 * const run = await kernel.execute('print(1 + 1)');
 * await kernel.shutdown();
 */
export class Kernel {
  /** Process id of the kernel (or of bwrap in the sandbox). */
  readonly pid: number;
  /** Session id sent in every message header. */
  readonly session = randomUUID();
  readonly sandboxed: boolean;
  readonly sessionRoot: string;
  readonly workDir: string;
  /** Messages dropped because they were unsigned or mis-signed. */
  rejectedMessages = 0;
  /** Filled by the kernel_info handshake. */
  info: Record<string, unknown> = {};

  readonly #signer: MessageSigner;
  readonly #sockets: {
    shell: Dealer;
    control: Dealer;
    stdin: Dealer;
    hb: Dealer;
    iopub: Subscriber;
  };
  readonly #queues: Record<'shell' | 'control' | 'stdin' | 'hb', SendQueue>;
  readonly #pending = new Map<string, PendingExecution>();
  readonly #exited: Promise<void>;
  readonly #logger: Logger;
  readonly #ipcFiles: string[];
  #stderr = '';
  #death: KernelDiedError | undefined;
  #closing = false;
  #closed = false;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #lastPong = Date.now();
  #handshake: { replied: boolean; iopub: boolean; wake: () => void } | undefined;
  #deathListeners = new Set<(error: KernelDiedError) => void>();

  private constructor(
    child: ChildProcess,
    signer: MessageSigner,
    endpoints: Record<SocketName, string>,
    options: KernelOptions,
    ipcFiles: string[],
  ) {
    this.pid = child.pid!;
    this.#signer = signer;
    this.sandboxed = options.sandbox === 'bubblewrap';
    this.sessionRoot = options.sessionRoot;
    this.workDir = options.workDir;
    this.#logger = options.logger ?? silentLogger;
    this.#ipcFiles = ipcFiles;
    registerKernelProcess(this.pid);

    const routingId = `quiver-${this.session}`;
    // The sockets connect before the kernel has bound its ports; ZeroMQ retries every 100 ms by
    // default, which would add ~50 ms to every cold start. Retry quickly instead (local only).
    const common = { linger: 0, reconnectInterval: 10, reconnectMaxInterval: 0 };
    this.#sockets = {
      // shell and stdin share a routing id: the kernel addresses stdin requests to the shell peer.
      shell: new Dealer({ ...common, routingId }),
      stdin: new Dealer({ ...common, routingId }),
      control: new Dealer(common),
      hb: new Dealer(common),
      // A high receive high-water mark: Node drains iopub fast (output past the cap is not even
      // parsed), and a dropped message may be the `idle` status a run waits for (see
      // IDLE_GRACE_MS for that case). Finite, so a starved event loop cannot queue without bound.
      iopub: new Subscriber({ ...common, receiveHighWaterMark: 10_000 }),
    };
    this.#sockets.iopub.subscribe();
    for (const name of SOCKET_NAMES) this.#sockets[name].connect(endpoints[name]);
    this.#queues = {
      shell: new SendQueue(this.#sockets.shell),
      control: new SendQueue(this.#sockets.control),
      stdin: new SendQueue(this.#sockets.stdin),
      hb: new SendQueue(this.#sockets.hb),
    };

    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-8192);
    });
    child.stdout?.resume();
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        unregisterKernelProcess(this.pid);
        // Reap anything the code forked into the kernel's process group.
        if (!this.sandboxed) killKernelProcessGroup(this.pid);
        this.#onDeath(
          new KernelDiedError(
            `The Python kernel died (${signal ? `signal ${signal}` : `exit code ${code}`})${
              signal === 'SIGKILL'
                ? ', possibly killed for using too much memory'
                : signal === 'SIGXCPU'
                  ? ': it used up its CPU-time budget (cpuTimeLimitSeconds)'
                  : ''
            }. All variables and imports were lost; the next call starts a fresh kernel.`,
            { exitCode: code, signal },
          ),
        );
        resolve();
      });
    });

    void this.#receive(this.#sockets.shell, (raw) => this.#onShell(raw));
    void this.#receive(this.#sockets.iopub, (raw) => this.#onIopub(raw));
    void this.#receive(this.#sockets.control, () => undefined);
    void this.#receive(this.#sockets.stdin, (raw) => this.#onStdin(raw));
    void this.#receiveHeartbeat();
  }

  /**
   * Launch a kernel, connect all five channels and complete the kernel_info handshake.
   * @throws {KernelStartError} when the process exits early or the handshake times out.
   */
  static async start(options: KernelOptions): Promise<Kernel> {
    const sandboxed = options.sandbox === 'bubblewrap';
    if (sandboxed && !options.bubblewrapPath) {
      throw new KernelStartError('Sandboxed kernels need bubblewrapPath (see detectSandbox()).');
    }
    const transport = sandboxed ? 'ipc' : (options.transport ?? 'tcp');
    const home = join(options.sessionRoot, 'home');
    const ipcDir = join(options.sessionRoot, 'ipc');
    const tmp = join(options.sessionRoot, 'tmp');
    await mkdir(options.sessionRoot, { recursive: true, mode: 0o700 });
    await Promise.all([
      mkdir(ipcDir, { recursive: true, mode: 0o700 }),
      mkdir(tmp, { recursive: true, mode: 0o700 }),
      ensureFontCache(options.python).then((cache) => prepareKernelHome(home, cache)),
    ]);
    // Free TCP ports are found by binding and releasing them, so another process can take one
    // before the kernel binds it; the kernel then exits at once (KERNEL_PORT_TAKEN_EXIT) and is
    // started again on new ports, as Jupyter's own client does.
    for (let attempt = 1; ; attempt++) {
      const kernel = await Kernel.#launch(options, transport, { home, ipcDir, tmp }, attempt);
      if (kernel !== undefined) return kernel;
      (options.logger ?? silentLogger).debug?.(
        `code-interpreter: a kernel port was taken before the kernel bound it; starting again (attempt ${attempt + 1})`,
      );
    }
  }

  /**
   * Start one kernel process and wait for its handshake. Undefined when it lost a port to another
   * process and may be tried again (up to {@link PORT_ATTEMPTS} attempts).
   */
  static async #launch(
    options: KernelOptions,
    transport: 'tcp' | 'ipc',
    paths: { home: string; ipcDir: string; tmp: string },
    attempt: number,
  ): Promise<Kernel | undefined> {
    const sandboxed = options.sandbox === 'bubblewrap';
    const { home, ipcDir, tmp } = paths;
    const key = randomBytes(32).toString('hex');
    let ip: string;
    let ports: number[];
    const ipcFiles: string[] = [];
    if (transport === 'ipc') {
      // ipc endpoints are `<ip>-<port>` files; sun_path is limited to 108 bytes.
      ip = join(ipcDir, 'k');
      ports = [1, 2, 3, 4, 5];
      for (const port of ports) ipcFiles.push(`${ip}-${port}`);
      if (Buffer.byteLength(ipcFiles[0]!) >= 100) {
        throw new KernelStartError(
          `The ipc socket path "${ipcFiles[0]}" is too long (Unix sockets allow 107 bytes). Use a shorter workRoot.`,
        );
      }
    } else {
      ip = '127.0.0.1';
      ports = await kernelPorts.find(5);
    }
    const [shellPort, iopubPort, stdinPort, controlPort, hbPort] = ports as [
      number,
      number,
      number,
      number,
      number,
    ];
    const connection = {
      transport,
      ip,
      shell_port: shellPort,
      iopub_port: iopubPort,
      stdin_port: stdinPort,
      control_port: controlPort,
      hb_port: hbPort,
      key,
      signature_scheme: 'hmac-sha256',
      kernel_name: 'python3',
    };
    const connectionFile = join(options.sessionRoot, 'kernel.json');
    await writeFile(connectionFile, JSON.stringify(connection), { mode: 0o600 });
    const endpoint = (port: number) =>
      transport === 'ipc' ? `ipc://${ip}-${port}` : `tcp://${ip}:${port}`;

    const env = kernelEnvironment({
      python: options.python,
      home,
      tmp: sandboxed ? '/tmp' : tmp,
      sandboxed,
      memoryLimitMb: options.memoryLimitMb,
      cpuTimeLimitSeconds: options.cpuTimeLimitSeconds,
      maxProcesses: options.maxProcesses,
      extra: options.env,
    });
    const python = options.python.executable.startsWith('/')
      ? options.python.executable
      : options.python.realExecutable;
    const kernelArgs = [
      '-c',
      KERNEL_BOOTSTRAP,
      '-f',
      connectionFile,
      '--HistoryManager.enabled=False',
      '--IPKernelApp.quiet=True',
    ];
    const [command, args] = sandboxed
      ? [
          options.bubblewrapPath!,
          [
            ...bubblewrapArguments({
              python: options.python,
              sessionRoot: options.sessionRoot,
              workDir: options.workDir,
            }),
            python,
            ...kernelArgs,
          ],
        ]
      : [python, kernelArgs];

    const child = spawn(command, args, {
      cwd: options.workDir,
      env,
      // Own process group: interrupts and kills reach forked children, and a Ctrl-C in Node's
      // terminal does not hit the kernel before Node has decided what to do.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid === undefined) {
      const [error] = (await once(child, 'error')) as [Error];
      throw new KernelStartError(`Could not start ${command}: ${error.message}`, { cause: error });
    }
    child.on('error', () => undefined);
    const signer = new MessageSigner(key);
    const endpoints = {
      shell: endpoint(shellPort),
      iopub: endpoint(iopubPort),
      stdin: endpoint(stdinPort),
      control: endpoint(controlPort),
      hb: endpoint(hbPort),
    };
    const kernel = new Kernel(child, signer, endpoints, options, ipcFiles);
    try {
      await kernel.#waitUntilReady(options.startupTimeoutMs ?? 30_000);
    } catch (error) {
      const portTaken = transport === 'tcp' && kernel.#death?.exitCode === KERNEL_PORT_TAKEN_EXIT;
      await kernel.shutdown({ graceMs: 0 });
      if (portTaken && attempt < PORT_ATTEMPTS) return undefined;
      throw error;
    }
    kernel.#startHeartbeat(
      options.heartbeatIntervalMs ?? 1000,
      options.heartbeatTimeoutMs ?? 10_000,
    );
    return kernel;
  }

  /** True until the kernel process exits or is shut down. */
  get alive(): boolean {
    return this.#death === undefined && !this.#closed;
  }

  /** Why the kernel died, once it has. */
  get death(): KernelDiedError | undefined {
    return this.#death;
  }

  /** The last 8 KiB the kernel process wrote to stderr. */
  get stderr(): string {
    return this.#stderr;
  }

  /** Resolves when the kernel process has exited. */
  get exited(): Promise<void> {
    return this.#exited;
  }

  /** Register a callback run once when the kernel dies (not on a requested shutdown). */
  onDeath(listener: (error: KernelDiedError) => void): () => void {
    this.#deathListeners.add(listener);
    return () => this.#deathListeners.delete(listener);
  }

  /**
   * Run code and collect its output. Never rejects for problems in the code or the kernel: the
   * status says what happened. A run is complete when both the shell `execute_reply` and the
   * iopub `status: idle` for the request have arrived (they come on different sockets in no
   * guaranteed order).
   *
   * @throws {InterpreterClosedError} when the kernel was shut down.
   */
  async execute(code: string, options: KernelExecuteOptions = {}): Promise<KernelExecution> {
    if (this.#death) return this.#diedExecution([], 0, this.#death);
    if (this.#closed) throw new InterpreterClosedError('This kernel');

    const maxOutputBytes = options.maxOutputBytes ?? 4 * 1024 * 1024;
    let settle!: () => void;
    let fail!: (error: KernelDiedError) => void;
    const finished = new Promise<KernelDiedError | undefined>((resolve) => {
      settle = () => resolve(undefined);
      fail = (error) => resolve(error);
    });
    const pending: PendingExecution = {
      replied: false,
      idle: false,
      outputs: [],
      keptBytes: 0,
      droppedBytes: 0,
      maxOutputBytes,
      onOutput: options.onOutput,
      settle,
      fail,
    };
    // Register before sending: under load the reply can arrive before `send()` resolves.
    const { frames, header } = this.#encode('execute_request', {
      code,
      silent: false,
      store_history: true,
      user_expressions: {},
      allow_stdin: false,
      // With stop_on_error the kernel may answer the next request "aborted" after an error.
      stop_on_error: false,
    });
    this.#pending.set(header.msg_id, pending);
    try {
      await this.#queues.shell.send(frames);
    } catch (error) {
      this.#pending.delete(header.msg_id);
      if (this.#death) return this.#diedExecution([], 0, this.#death);
      throw error;
    }

    let interruptReason: 'timeout' | 'cancelled' | undefined;
    const interrupted = new Promise<'timeout' | 'cancelled'>((resolve) => {
      if (options.timeoutMs !== undefined && options.timeoutMs > 0) {
        const timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
        void finished.then(() => clearTimeout(timer));
      }
      if (options.signal) {
        if (options.signal.aborted) resolve('cancelled');
        const onAbort = () => resolve('cancelled');
        options.signal.addEventListener('abort', onAbort, { once: true });
        void finished.then(() => options.signal?.removeEventListener('abort', onAbort));
      }
    });

    let death = await Promise.race([finished, interrupted.then((reason) => reason)]);
    let stateLost = false;
    if (death === 'timeout' || death === 'cancelled') {
      interruptReason = death;
      await this.interrupt();
      const grace = options.interruptGraceMs ?? 2000;
      const outcome = await Promise.race([finished, sleep(grace).then(() => 'grace' as const)]);
      if (outcome === 'grace') {
        // The code ignored KeyboardInterrupt (or is stuck in C code): only a restart stops it.
        stateLost = true;
        this.#pending.delete(header.msg_id);
        await this.shutdown({ graceMs: 0 });
        death = undefined;
      } else {
        death = outcome;
      }
    } else {
      this.#pending.delete(header.msg_id);
    }
    this.#pending.delete(header.msg_id);

    if (death instanceof KernelDiedError && interruptReason === undefined) {
      return this.#diedExecution(pending.outputs, pending.droppedBytes, death);
    }
    const reply = pending.reply;
    const replyStatus = typeof reply?.status === 'string' ? reply.status : undefined;
    return {
      status:
        interruptReason ??
        (replyStatus === 'ok' ? 'ok' : replyStatus === 'aborted' ? 'aborted' : 'error'),
      outputs: pending.outputs,
      executionCount: typeof reply?.execution_count === 'number' ? reply.execution_count : null,
      droppedOutputBytes: pending.droppedBytes,
      stateLost: stateLost || death instanceof KernelDiedError,
      ...(death instanceof KernelDiedError ? { death } : {}),
    };
  }

  /**
   * Interrupt the running code (KeyboardInterrupt). Unsandboxed: SIGINT to the kernel's process
   * group. Sandboxed: an `interrupt_request` on the control channel, because a signal to the
   * process group would kill bwrap instead.
   */
  async interrupt(): Promise<void> {
    if (!this.alive) return;
    if (this.sandboxed) {
      // SIGINT to bwrap's process group would kill bwrap. Signal the Python process itself
      // (bwrap -> sandbox init -> python) when /proc shows it; otherwise ask over control.
      const python = this.#sandboxedPythonPid();
      if (python !== undefined) {
        try {
          process.kill(python, 'SIGINT');
          return;
        } catch {
          // fall through to the protocol's way
        }
      }
      await this.#send('control', 'interrupt_request', {}).catch(() => undefined);
    } else {
      killKernelProcessGroup(this.pid, 'SIGINT');
    }
  }

  /**
   * Stop the kernel: `shutdown_request` on control, then SIGTERM, then SIGKILL to its process
   * group; closes the sockets and removes ipc socket files. Safe to call more than once.
   */
  async shutdown(options: { graceMs?: number } = {}): Promise<void> {
    if (this.#closed) return this.#exited;
    this.#closing = true;
    this.#stopHeartbeat();
    const grace = options.graceMs ?? 1000;
    if (this.#death === undefined) {
      if (grace > 0) {
        await this.#send('control', 'shutdown_request', { restart: false }).catch(() => undefined);
        await Promise.race([this.#exited, sleep(grace)]);
      }
      if (this.#death === undefined) {
        killKernelProcessGroup(this.pid, 'SIGTERM');
        await Promise.race([this.#exited, sleep(Math.min(grace, 500))]);
      }
      if (this.#death === undefined) killKernelProcessGroup(this.pid, 'SIGKILL');
      await this.#exited;
    }
    this.#closed = true;
    for (const socket of Object.values(this.#sockets)) socket.close();
    await Promise.all(this.#ipcFiles.map((file) => rm(file, { force: true })));
  }

  #sandboxedPythonPid(): number | undefined {
    const children = (pid: number): number[] => {
      try {
        return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map(Number);
      } catch {
        return [];
      }
    };
    const init = children(this.pid);
    if (init.length !== 1) return undefined;
    const kernel = children(init[0]!);
    return kernel.length === 1 ? kernel[0] : undefined;
  }

  #encode(
    msgType: string,
    content: Record<string, unknown>,
    parentHeader?: Partial<MessageHeader>,
  ): { frames: Buffer[]; header: MessageHeader } {
    return encodeMessage(
      { msgType, content, session: this.session, ...(parentHeader ? { parentHeader } : {}) },
      this.#signer,
    );
  }

  async #send(
    channel: 'shell' | 'control' | 'stdin',
    msgType: string,
    content: Record<string, unknown>,
    parentHeader?: Partial<MessageHeader>,
  ): Promise<MessageHeader> {
    const { frames, header } = this.#encode(msgType, content, parentHeader);
    await this.#queues[channel].send(frames);
    return header;
  }

  async #receive(socket: Dealer | Subscriber, handler: (raw: RawMessage) => void): Promise<void> {
    try {
      for await (const frames of socket) {
        let raw: RawMessage;
        try {
          raw = verifyFrames(frames, this.#signer);
        } catch (error) {
          this.rejectedMessages += 1;
          this.#logger.warn?.(`code-interpreter: ${(error as Error).message}`);
          continue;
        }
        try {
          handler(raw);
        } catch (error) {
          this.#logger.warn?.(
            `code-interpreter: bad message from kernel: ${(error as Error).message}`,
          );
        }
      }
    } catch {
      // The socket was closed.
    }
  }

  async #receiveHeartbeat(): Promise<void> {
    try {
      for await (const _frames of this.#sockets.hb) this.#lastPong = Date.now();
    } catch {
      // closed
    }
  }

  #onShell(raw: RawMessage): void {
    const { header, parentHeader } = parseHeaders(raw);
    if (header.msg_type === 'kernel_info_reply') {
      if (this.#handshake && !this.#handshake.replied) {
        this.info = JSON.parse(raw.parts[3].toString('utf8')) as Record<string, unknown>;
        this.#handshake.replied = true;
        this.#handshake.wake();
      }
      return;
    }
    if (header.msg_type !== 'execute_reply' || !parentHeader.msg_id) return;
    const pending = this.#pending.get(parentHeader.msg_id);
    if (!pending) return;
    pending.reply = JSON.parse(raw.parts[3].toString('utf8')) as Record<string, unknown>;
    pending.replied = true;
    if (pending.idle) {
      pending.settle();
    } else {
      // iopub is lossy (a PUB socket drops past its high-water mark, e.g. in a print flood): if
      // the idle status never comes, the reply alone ends the run after a grace period.
      setTimeout(() => pending.settle(), IDLE_GRACE_MS).unref();
    }
  }

  #onStdin(raw: RawMessage): void {
    // allow_stdin is false, so input() raises in Python; answer any request anyway so a kernel
    // configured otherwise never blocks forever.
    const { header } = parseHeaders(raw);
    if (header.msg_type === 'input_request') {
      void this.#send('stdin', 'input_reply', { value: '' }, header).catch(() => undefined);
    }
  }

  #onIopub(raw: RawMessage): void {
    if (this.#handshake && !this.#handshake.iopub) {
      this.#handshake.iopub = true;
      this.#handshake.wake();
    }
    const { header, parentHeader } = parseHeaders(raw);
    const pending = parentHeader.msg_id ? this.#pending.get(parentHeader.msg_id) : undefined;
    if (!pending) return;
    const type = header.msg_type;
    if (type === 'status') {
      const content = JSON.parse(raw.parts[3].toString('utf8')) as { execution_state?: string };
      if (content.execution_state === 'idle') {
        pending.idle = true;
        if (pending.replied) pending.settle();
      }
      return;
    }
    if (
      type !== 'stream' &&
      type !== 'execute_result' &&
      type !== 'display_data' &&
      type !== 'update_display_data' &&
      type !== 'error'
    ) {
      return;
    }
    const size = raw.parts[3].length;
    // Past the cap, stream and display output is only counted, never parsed: an endless print
    // loop must not grow Node's memory. Errors are always kept (they are small and matter).
    if (type !== 'error' && pending.keptBytes + size > pending.maxOutputBytes) {
      pending.droppedBytes += size;
      return;
    }
    pending.keptBytes += size;
    const content = JSON.parse(raw.parts[3].toString('utf8')) as Record<string, unknown>;
    let item: OutputItem;
    if (type === 'stream') {
      item = {
        type: 'stream',
        name: content.name === 'stderr' ? 'stderr' : 'stdout',
        text: String(content.text ?? ''),
      };
    } else if (type === 'error') {
      item = {
        type: 'error',
        ename: String(content.ename ?? 'Error'),
        evalue: String(content.evalue ?? ''),
        traceback: Array.isArray(content.traceback) ? content.traceback.map(String) : [],
      };
    } else {
      item = {
        type: 'display',
        data: (content.data ?? {}) as Record<string, unknown>,
        isResult: type === 'execute_result',
      };
    }
    pending.outputs.push(item);
    pending.onOutput?.(item);
  }

  async #waitUntilReady(timeoutMs: number): Promise<void> {
    // iopub drops what is published before the subscription connects, so repeat kernel_info
    // requests until both a reply and some iopub message have arrived.
    const deadline = Date.now() + timeoutMs;
    const state = { replied: false, iopub: false, wake: () => undefined as void };
    this.#handshake = state;
    try {
      while (!(state.replied && state.iopub)) {
        if (this.#death) {
          throw new KernelStartError(
            `The kernel process exited during start-up (${this.#death.signal ?? `exit code ${this.#death.exitCode}`}). Its stderr:\n${this.#stderr.trim() || '(empty)'}`,
            { stderr: this.#stderr },
          );
        }
        if (Date.now() > deadline) {
          throw new KernelStartError(
            `The kernel did not answer kernel_info within ${timeoutMs} ms. Its stderr:\n${this.#stderr.trim() || '(empty)'}`,
            { stderr: this.#stderr },
          );
        }
        await this.#send('shell', 'kernel_info_request', {});
        const woken = new Promise<void>((resolve) => {
          state.wake = resolve;
        });
        await Promise.race([woken, this.#exited, sleep(state.replied ? 50 : 200)]);
      }
    } finally {
      this.#handshake = undefined;
    }
  }

  #startHeartbeat(intervalMs: number, timeoutMs: number): void {
    this.#lastPong = Date.now();
    // The heartbeat answers even while Python spins (it runs without the GIL): it catches a
    // hung or stopped process, not busy code. Process exit is watched separately.
    this.#heartbeatTimer = setInterval(() => {
      if (!this.alive || this.#closing) return;
      if (Date.now() - this.#lastPong > timeoutMs) {
        this.#logger.warn?.('code-interpreter: kernel stopped answering heartbeats; killing it');
        killKernelProcessGroup(this.pid, 'SIGKILL');
        return;
      }
      void this.#queues.hb.send([Buffer.from('ping')]).catch(() => undefined);
    }, intervalMs);
    this.#heartbeatTimer.unref();
  }

  #stopHeartbeat(): void {
    if (this.#heartbeatTimer) clearInterval(this.#heartbeatTimer);
    this.#heartbeatTimer = undefined;
  }

  #onDeath(error: KernelDiedError): void {
    this.#death = error;
    this.#stopHeartbeat();
    for (const pending of this.#pending.values()) pending.fail(error);
    this.#pending.clear();
    if (!this.#closing) {
      for (const listener of this.#deathListeners) listener(error);
      // Release sockets of a kernel nobody shut down.
      void this.shutdown({ graceMs: 0 });
    }
  }

  #diedExecution(outputs: OutputItem[], dropped: number, death: KernelDiedError): KernelExecution {
    return {
      status: 'died',
      outputs,
      executionCount: null,
      droppedOutputBytes: dropped,
      stateLost: true,
      death,
    };
  }
}

export type { JupyterMessage };
