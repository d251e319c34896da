import { once } from 'node:events';
import { mkdirSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KernelStartError } from '../src/errors.js';
import { Kernel, type KernelOptions, kernelPorts } from '../src/kernel.js';
import { type PythonInfo, findPython } from '../src/python-discovery.js';
import { makeWorkRoot, waitForNoProcesses } from './helpers.js';

const workRoot = makeWorkRoot('qci-kernel');
let python: PythonInfo;
let kernel: Kernel;
const started: Kernel[] = [];

async function startKernel(name: string, extra: Partial<KernelOptions> = {}): Promise<Kernel> {
  const sessionRoot = join(workRoot, name);
  const workDir = join(sessionRoot, 'work');
  mkdirSync(workDir, { recursive: true });
  const instance = await Kernel.start({
    python,
    sandbox: 'none',
    sessionRoot,
    workDir,
    memoryLimitMb: 3072,
    ...extra,
  });
  started.push(instance);
  return instance;
}

function stdout(run: { outputs: { type: string; text?: string }[] }): string {
  return run.outputs.map((output) => (output.type === 'stream' ? output.text : '')).join('');
}

beforeAll(async () => {
  python = await findPython();
  kernel = await startKernel('shared');
});

afterAll(async () => {
  await Promise.all(started.map((instance) => instance.shutdown()));
  const left = await waitForNoProcesses(workRoot);
  rmSync(workRoot, { recursive: true, force: true });
  expect(left).toEqual([]);
});

describe('Kernel (ipykernel over ZeroMQ, unsandboxed)', () => {
  it('completes the kernel_info handshake and reports the kernel', () => {
    expect(kernel.alive).toBe(true);
    expect(kernel.info.protocol_version).toMatch(/^5\./);
    expect((kernel.info.language_info as { name: string }).name).toBe('python');
  });

  it('runs code, returns the last expression, and keeps variables and imports', async () => {
    const first = await kernel.execute(
      'import math\nvalue = math.factorial(5)\nprint("hi")\nvalue * 2',
    );
    expect(first.status).toBe('ok');
    expect(stdout(first)).toBe('hi\n');
    expect(first.outputs.at(-1)).toEqual({
      type: 'display',
      data: { 'text/plain': '240' },
      isResult: true,
    });
    const second = await kernel.execute('print(value + 1, math.pi > 3)');
    expect(stdout(second)).toBe('121 True\n');
    expect(second.executionCount).toBe((first.executionCount ?? 0) + 1);
  });

  it('accepts empty code', async () => {
    const run = await kernel.execute('');
    expect(run.status).toBe('ok');
    expect(run.outputs).toEqual([]);
  });

  it('reports a syntax error and stays usable', async () => {
    const run = await kernel.execute('def broken(:\n  pass');
    expect(run.status).toBe('error');
    const error = run.outputs.find((output) => output.type === 'error');
    expect(error).toMatchObject({ type: 'error', ename: 'SyntaxError' });
    expect(stdout(await kernel.execute('print("still fine")'))).toBe('still fine\n');
  });

  it('delivers output while the code is still running', async () => {
    let finished = false;
    let sawOutputBeforeFinish = false;
    const run = kernel.execute(
      'import time\nprint("early", flush=True)\ntime.sleep(0.5)\nprint("late")',
      {
        onOutput: (item) => {
          if (item.type === 'stream' && item.text.includes('early') && !finished)
            sawOutputBeforeFinish = true;
        },
      },
    );
    const result = await run;
    finished = true;
    expect(sawOutputBeforeFinish).toBe(true);
    expect(stdout(result)).toBe('early\nlate\n');
  });

  it('interrupts an infinite loop at the timeout and keeps the kernel state', async () => {
    await kernel.execute('kept = 41');
    const run = await kernel.execute('while True:\n    pass', { timeoutMs: 300 });
    expect(run.status).toBe('timeout');
    expect(run.stateLost).toBe(false);
    expect(
      run.outputs.some((output) => output.type === 'error' && output.ename === 'KeyboardInterrupt'),
    ).toBe(true);
    const after = await kernel.execute('kept + 1');
    expect(after.status).toBe('ok');
    expect(after.outputs[0]).toMatchObject({ data: { 'text/plain': '42' } });
  });

  it('interrupts when the AbortSignal fires', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const run = await kernel.execute('import time\ntime.sleep(30)', { signal: controller.signal });
    expect(run.status).toBe('cancelled');
    expect(kernel.alive).toBe(true);
  });

  it('turns a memory bomb into MemoryError under RLIMIT_AS and survives', async () => {
    const run = await kernel.execute('bomb = bytearray(16 * 1024**3)');
    expect(run.status).toBe('error');
    expect(run.outputs.find((output) => output.type === 'error')).toMatchObject({
      ename: 'MemoryError',
    });
    expect(stdout(await kernel.execute('print("after bomb")'))).toBe('after bomb\n');
  });

  it('rejects mis-signed and unsigned messages arriving on iopub', async () => {
    const before = kernel.rejectedMessages;
    const code = [
      'import json, uuid',
      'k = get_ipython().kernel',
      'parent = k.get_parent("shell")["header"]',
      'for signature in (b"0" * 64, b""):',
      '    header = dict(parent, msg_id=str(uuid.uuid4()), msg_type="stream")',
      '    frames = [b"stream", b"<IDS|MSG>", signature, json.dumps(header, default=str).encode(),',
      '              json.dumps(parent, default=str).encode(), b"{}", json.dumps({"name": "stdout", "text": "FORGED\\n"}).encode()]',
      '    k.iopub_socket.send_multipart(frames)',
      'print("genuine")',
    ].join('\n');
    const run = await kernel.execute(code);
    expect(run.status).toBe('ok');
    expect(stdout(run)).toBe('genuine\n');
    expect(kernel.rejectedMessages - before).toBe(2);
  });

  it('stops keeping output past maxOutputBytes and only counts the rest', async () => {
    const run = await kernel.execute('for i in range(200):\n    print("y" * 10_000)', {
      maxOutputBytes: 50_000,
    });
    expect(run.status).toBe('ok');
    const kept = stdout(run).length;
    expect(kept).toBeLessThanOrEqual(50_000);
    expect(kept + run.droppedOutputBytes).toBeGreaterThan(1_900_000);
  });

  it('serialises concurrent sends on one socket (no EBUSY)', async () => {
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => kernel.execute(`${i} * 2`)),
    );
    expect(runs.map((run) => run.status)).toEqual(Array(20).fill('ok'));
    expect(
      runs.map((run) => (run.outputs[0] as { data: Record<string, string> }).data['text/plain']),
    ).toEqual(Array.from({ length: 20 }, (_, i) => String(i * 2)));
  });
});

/**
 * Run `body` while the kernel port finder hands out, as the shell port, a port a Node server is
 * listening on: `taken(attempt)` says for which start attempts (1, 2, ...). The server reads and
 * drops what a client sends (so a client's close reaches it). Returns the ports handed out, and
 * how many connections to the server were still open after `body` (0 once every client closed).
 */
async function withTakenPort(
  taken: (attempt: number) => boolean,
  body: (port: number) => Promise<void>,
): Promise<{ handed: number[][]; openAfter: number }> {
  const squatter: Server = createServer((socket) => socket.resume());
  squatter.listen(0, '127.0.0.1');
  await once(squatter, 'listening');
  const port = (squatter.address() as { port: number }).port;
  const find = kernelPorts.find;
  const handed: number[][] = [];
  kernelPorts.find = async (count) => {
    const ports = await find(count);
    if (taken(handed.length + 1)) ports[0] = port;
    handed.push(ports);
    return ports;
  };
  let openAfter = -1;
  try {
    await body(port);
    // A close takes a moment to arrive: wait for it (up to 5 s), then count.
    for (let tries = 0; tries < 50 && openAfter !== 0; tries++) {
      if (tries > 0) await sleep(100);
      openAfter = await new Promise<number>((resolve) =>
        squatter.getConnections((_error, count) => resolve(count)),
      );
    }
  } finally {
    kernelPorts.find = find;
    await new Promise((resolve) => squatter.close(resolve));
  }
  return { handed, openAfter };
}

describe('Kernel start-up when another process takes a port first', () => {
  it('starts the kernel again on new ports', async () => {
    let instance: Kernel | undefined;
    const { handed, openAfter } = await withTakenPort(
      (attempt) => attempt === 1,
      async () => {
        instance = await startKernel('port-taken-once');
      },
    );
    expect(handed).toHaveLength(2);
    expect(handed[1]).not.toContain(handed[0]![0]);
    // The failed attempt's sockets are closed, not left connected to the other process.
    expect(openAfter).toBe(0);
    const run = await instance!.execute('print(6 * 7)');
    expect(stdout(run)).toBe('42\n');
  });

  it('gives up after three attempts with a KernelStartError that says why', async () => {
    let failure: unknown;
    const { handed, openAfter } = await withTakenPort(
      () => true,
      async () => {
        failure = await startKernel('port-taken-always').then(
          () => undefined,
          (error: unknown) => error,
        );
      },
    );
    expect(handed).toHaveLength(3);
    expect(openAfter).toBe(0);
    expect(failure).toBeInstanceOf(KernelStartError);
    expect((failure as Error).message).toMatch(/exit code 98/);
    expect((failure as Error).message).toMatch(/taken by another process/);
  });
});

describe('Kernel failures', () => {
  it('restarts nothing itself but kills a kernel whose code ignores the interrupt', async () => {
    const stubborn = await startKernel('stubborn');
    const run = await stubborn.execute(
      'import time\nwhile True:\n    try:\n        time.sleep(10)\n    except KeyboardInterrupt:\n        pass',
      { timeoutMs: 300, interruptGraceMs: 500 },
    );
    expect(run.status).toBe('timeout');
    expect(run.stateLost).toBe(true);
    expect(stubborn.alive).toBe(false);
  });

  it('detects os._exit promptly and reports it on that call and later ones', async () => {
    const doomed = await startKernel('exit');
    const run = await doomed.execute('import os\nprint("bye", flush=True)\nos._exit(3)');
    expect(run.status).toBe('died');
    expect(run.death?.exitCode).toBe(3);
    expect(run.death?.code).toBe('kernel_died');
    expect(doomed.alive).toBe(false);
    const again = await doomed.execute('1');
    expect(again.status).toBe('died');
  });

  it('detects a segfault', async () => {
    const doomed = await startKernel('segv');
    const run = await doomed.execute('import ctypes\nctypes.string_at(0)');
    expect(run.status).toBe('died');
    expect(run.death?.signal).toBe('SIGSEGV');
  });

  it('declares a stopped (hung) kernel dead when heartbeats stop', async () => {
    const hung = await startKernel('hung', { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 1000 });
    const died = new Promise((resolve) => hung.onDeath(resolve));
    process.kill(hung.pid, 'SIGSTOP');
    const run = await hung.execute('1 + 1');
    await died;
    expect(run.status).toBe('died');
    expect(run.death?.signal).toBe('SIGKILL');
  });

  it('fails start-up clearly when the kernel cannot start', async () => {
    const sessionRoot = join(workRoot, 'broken');
    mkdirSync(sessionRoot, { recursive: true });
    await expect(
      Kernel.start({
        python,
        sandbox: 'none',
        sessionRoot,
        workDir: sessionRoot,
        env: { PYTHONPATH: '/nonexistent' },
        memoryLimitMb: 64,
      }),
    ).rejects.toThrow(/exited during start-up/);
  });
});
