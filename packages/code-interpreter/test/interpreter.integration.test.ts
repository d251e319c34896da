import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CodeInterpreter } from '../src/code-interpreter.js';
import { FileNotAllowedError, type KernelDiedError, KernelLimitError } from '../src/errors.js';
import { makeWorkRoot, textOf, waitForNoProcesses } from './helpers.js';

const workRoot = makeWorkRoot('qci-int');
const fixtures = join(__dirname, 'fixtures');
const interpreter = new CodeInterpreter({
  sandbox: 'none',
  workRoot,
  poolSize: 2,
  memoryLimitMb: 3072,
  outputLimitChars: 2000,
  allowedRoots: [fixtures],
  timeoutMs: 20_000,
  maxKernels: 12,
});
const others: CodeInterpreter[] = [];

beforeAll(async () => {
  await interpreter.start();
});

afterAll(async () => {
  await Promise.all([interpreter.close(), ...others.map((other) => other.close())]);
  const left = await waitForNoProcesses(workRoot);
  rmSync(workRoot, { recursive: true, force: true });
  expect(left).toEqual([]);
});

describe('CodeInterpreter sessions', () => {
  it('keeps state within a session and isolates sessions from each other', async () => {
    const first = await interpreter.run({
      sessionId: 'a',
      code: 'import statistics\nsecret = statistics.mean([1, 2, 3])',
    });
    expect(first.status).toBe('ok');
    const second = await interpreter.run({ sessionId: 'a', code: 'print(secret)' });
    expect(textOf(second.content)).toBe('2\n');
    const other = await interpreter.run({ sessionId: 'b', code: 'print(secret)' });
    expect(other.status).toBe('error');
    expect(other.error?.code).toBe('python_exception');
    expect(textOf(other.content)).toContain("NameError: name 'secret' is not defined");
    expect(other.workDir).not.toBe(second.workDir);
    await Promise.all([interpreter.closeSession('a'), interpreter.closeSession('b')]);
  });

  it('queues two concurrent calls to one session and runs them in order', async () => {
    await interpreter.run({ sessionId: 'q', code: 'order = []' });
    const slow = interpreter.run({
      sessionId: 'q',
      code: 'import time\ntime.sleep(0.4)\norder.append("first")',
    });
    const fast = interpreter.run({ sessionId: 'q', code: 'order.append("second")\nprint(order)' });
    const [slowResult, fastResult] = await Promise.all([slow, fast]);
    expect(slowResult.status).toBe('ok');
    expect(textOf(fastResult.content)).toBe("['first', 'second']\n");
    await interpreter.closeSession('q');
  });

  it('runs different sessions in parallel', async () => {
    const finished: string[] = [];
    const slow = interpreter
      .run({ sessionId: 'p1', code: 'import time\ntime.sleep(1.5)' })
      .then(() => finished.push('slow'));
    const fast = interpreter
      .run({ sessionId: 'p2', code: 'print("quick")' })
      .then(() => finished.push('fast'));
    await Promise.all([slow, fast]);
    expect(finished).toEqual(['fast', 'slow']);
    await Promise.all([interpreter.closeSession('p1'), interpreter.closeSession('p2')]);
  });

  it('keeps a warm pool of kernels for new sessions', async () => {
    const result = await interpreter.run({ code: '1' });
    await interpreter.closeSession(result.sessionId);
    // The pool refills in the background after every session it hands out.
    expect(interpreter.pooledKernels).toBe(2);
  });

  it('reports a Python exception with a clean traceback and keeps the session', async () => {
    const result = await interpreter.run({ sessionId: 'e', code: 'x = 1\n1 / 0' });
    expect(result.status).toBe('error');
    const text = textOf(result.content);
    expect(text).toContain('ZeroDivisionError');
    expect(text).not.toContain('\u001b[');
    expect(textOf((await interpreter.run({ sessionId: 'e', code: 'print(x)' })).content)).toBe(
      '1\n',
    );
    await interpreter.closeSession('e');
  });

  it('caps a 100 MB print flood with a truncation marker and stays usable', async () => {
    const result = await interpreter.run({
      sessionId: 'flood',
      code: 'for _ in range(100):\n    print("z" * 1_000_000)',
    });
    expect(result.status).toBe('ok');
    expect(result.truncated).toBe(true);
    const text = textOf(result.content);
    expect(text.length).toBeLessThan(3000);
    expect(text).toMatch(/\[output truncated: \d+ more characters not shown\]/);
    expect(
      textOf((await interpreter.run({ sessionId: 'flood', code: 'print("ok")' })).content),
    ).toBe('ok\n');
    await interpreter.closeSession('flood');
  });

  it('cleans binary data written to stdout', async () => {
    const result = await interpreter.run({
      sessionId: 'bin',
      code: 'import sys\nsys.stdout.write(bytes(range(256)).decode("latin-1"))\nprint()\nprint(b"\\x00\\xff\\x1b[31m")',
    });
    expect(result.status).toBe('ok');
    const text = textOf(result.content);
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(text).toContain("b'\\x00\\xff\\x1b[31m'");
    await interpreter.closeSession('bin');
  });

  it('restarts the kernel when the code ignores the interrupt, and says state was lost', async () => {
    await interpreter.run({ sessionId: 'stubborn', code: 'lost = True' });
    const result = await interpreter.run({
      sessionId: 'stubborn',
      timeoutMs: 300,
      code: 'import time\nwhile True:\n    try:\n        time.sleep(5)\n    except KeyboardInterrupt:\n        pass',
    });
    expect(result.status).toBe('timeout');
    expect(result.stateLost).toBe(true);
    expect(result.error?.code).toBe('execution_timeout');
    expect(textOf(result.content)).toMatch(/restarted.*lost/);
    const after = await interpreter.run({ sessionId: 'stubborn', code: "print('lost' in dir())" });
    expect(textOf(after.content)).toBe('False\n');
    await interpreter.closeSession('stubborn');
  });

  it('reports a dead kernel on that call and serves the next call with a fresh one in the same work dir', async () => {
    await interpreter.run({
      sessionId: 'dead',
      code: 'open("keep.txt", "w").write("kept")\nalive = 1',
    });
    const died = await interpreter.run({ sessionId: 'dead', code: 'import os\nos._exit(9)' });
    expect(died.status).toBe('died');
    expect(died.error?.code).toBe('kernel_died');
    expect(died.stateLost).toBe(true);
    expect(textOf(died.content)).toContain('kernel died');
    const next = await interpreter.run({
      sessionId: 'dead',
      code: "print(open('keep.txt').read(), 'alive' in dir())",
    });
    expect(textOf(next.content)).toBe('kept False\n');
    await interpreter.closeSession('dead');
  });

  it('reaps a process the code forks when the session closes', async () => {
    const result = await interpreter.run({
      sessionId: 'fork',
      code: 'import os, time\npid = os.fork()\nif pid == 0:\n    time.sleep(600)\n    os._exit(0)\nprint(pid)',
    });
    const pid = Number(textOf(result.content).trim());
    expect(pid).toBeGreaterThan(1);
    expect(isRunning(pid)).toBe(true);
    await interpreter.closeSession('fork');
    expect(await waitUntil(() => !isRunning(pid))).toBe(true);
  });
});

describe('CodeInterpreter files and charts', () => {
  it('copies named files in, and lists the files the code creates', async () => {
    const result = await interpreter.run({
      sessionId: 'files',
      files: [join(fixtures, 'sales.csv')],
      code: [
        'import pandas as pd, os, json',
        'df = pd.read_csv("sales.csv")',
        'os.makedirs("out", exist_ok=True)',
        'df.groupby("region").revenue.sum().to_csv("out/by_region.csv")',
        'json.dump({"rows": len(df)}, open("summary.json", "w"))',
        'print(round(df.revenue.sum(), 2))',
      ].join('\n'),
    });
    expect(result.status).toBe('ok');
    expect(textOf(result.content)).toContain('397.5\n');
    expect(result.createdFiles.map((path) => path.slice(result.workDir.length + 1))).toEqual([
      'out/by_region.csv',
      'summary.json',
    ]);
    expect(readFileSync(join(result.workDir, 'out/by_region.csv'), 'utf8')).toContain('华东,218.5');
    expect(result.content.filter((block) => block.type === 'file')).toHaveLength(2);
  });

  it('refuses files outside the allowed roots', async () => {
    await expect(
      interpreter.run({ sessionId: 'files', files: ['/etc/hostname'], code: '1' }),
    ).rejects.toThrow(FileNotAllowedError);
    await expect(
      interpreter.run({
        sessionId: 'files',
        files: [join(fixtures, '..', 'helpers.ts')],
        code: '1',
      }),
    ).rejects.toThrow(/outside the allowed roots/);
    await expect(
      interpreter.run({ sessionId: 'files', files: [join(fixtures, 'missing.csv')], code: '1' }),
    ).rejects.toThrow(/does not exist/);
  });

  it('renders a matplotlib chart headless, with CJK text, as a saved PNG image block', async () => {
    const result = await interpreter.run({
      sessionId: 'chart',
      code: [
        'import matplotlib.pyplot as plt',
        'import matplotlib.font_manager as fm',
        'plt.plot([1, 2, 3], [3, 1, 2])',
        'plt.title("销售额 月度趋势")',
        'print(fm.findfont(fm.FontProperties(family=["sans-serif"])))',
        'plt.show()',
      ].join('\n'),
    });
    expect(result.status).toBe('ok');
    const text = textOf(result.content);
    expect(text).toMatch(/wqy|WenQuanYi|Noto.*CJK/i);
    expect(text).not.toMatch(/missing from (current )?font/i);
    const images = result.content.filter((block) => block.type === 'image');
    expect(images).toHaveLength(1);
    const image = images[0] as { path: string; mimeType: string; data: string };
    expect(image.mimeType).toBe('image/png');
    expect(existsSync(image.path)).toBe(true);
    expect(readFileSync(image.path).subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );
    expect(Buffer.from(image.data, 'base64').length).toBeGreaterThan(5000);
    expect(result.createdFiles).toEqual([]);
  });
});

describe('CodeInterpreter limits', () => {
  it('refuses a new session with a clear error when maxKernels are alive', async () => {
    const capped = new CodeInterpreter({ sandbox: 'none', workRoot, poolSize: 1, maxKernels: 2 });
    others.push(capped);
    await capped.run({ sessionId: 'one', code: '1' });
    await capped.run({ sessionId: 'two', code: '1' });
    expect(capped.liveKernels).toBe(2);
    await expect(capped.run({ sessionId: 'three', code: '1' })).rejects.toThrow(KernelLimitError);
    await expect(capped.run({ sessionId: 'three', code: '1' })).rejects.toThrow(/maxKernels/);
    await capped.closeSession('one');
    const third = await capped.run({ sessionId: 'three', code: 'print(3)' });
    expect(textOf(third.content)).toBe('3\n');
  });

  it('kills a kernel that spends its CPU-time budget (RLIMIT_CPU) and starts a fresh one', async () => {
    const limited = new CodeInterpreter({
      sandbox: 'none',
      workRoot,
      poolSize: 0,
      cpuTimeLimitSeconds: 2,
    });
    others.push(limited);
    const result = await limited.run({
      sessionId: 'cpu',
      code: 'while True:\n    pass',
      timeoutMs: 60_000,
    });
    expect(result.status).toBe('died');
    expect((result.error as KernelDiedError).signal).toMatch(/SIGXCPU|SIGKILL/);
    expect(
      textOf((await limited.run({ sessionId: 'cpu', code: 'print("fresh budget")' })).content),
    ).toBe('fresh budget\n');
    await limited.close();
  });

  it('closes sessions idle longer than the TTL', async () => {
    const reaping = new CodeInterpreter({
      sandbox: 'none',
      workRoot,
      poolSize: 0,
      sessionTtlMs: 200,
    });
    others.push(reaping);
    const result = await reaping.run({ sessionId: 'idle', code: '1' });
    expect(reaping.sessionIds).toEqual(['idle']);
    expect(await waitUntil(() => reaping.sessionIds.length === 0)).toBe(true);
    expect(await waitUntil(() => !existsSync(result.workDir))).toBe(true);
    expect(reaping.liveKernels).toBe(0);
    const again = await reaping.run({ sessionId: 'idle', code: '1' });
    expect(again.stateLost).toBe(true);
    expect(textOf(again.content)).toMatch(/was closed after being idle/);
  });
});

function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

async function waitUntil(predicate: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}
