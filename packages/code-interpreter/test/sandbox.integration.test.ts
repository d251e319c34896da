import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CodeInterpreter } from '../src/code-interpreter.js';
import { makeWorkRoot, processesMatching, textOf, waitForNoProcesses } from './helpers.js';

// The project's set-up installs bubblewrap; this suite fails (rather than skips) without it.
const workRoot = makeWorkRoot('qci-sbx');
const interpreter = new CodeInterpreter({
  sandbox: 'bubblewrap',
  workRoot,
  poolSize: 1,
  memoryLimitMb: 3072,
});
const secretDir = mkdtempSync(join(tmpdir(), 'qci-secret-'));
const secretFile = join(secretDir, 'secret.txt');
const server = createServer((socket) => socket.end('host service\n'));

async function run(code: string, sessionId = 'sandbox') {
  return interpreter.run({ sessionId, code, timeoutMs: 20_000 });
}

beforeAll(async () => {
  writeFileSync(secretFile, 'host secret');
  server.listen(0, '127.0.0.1');
  const info = await interpreter.start();
  expect(info.sandbox.mode).toBe('bubblewrap');
});

afterAll(async () => {
  server.close();
  await interpreter.close();
  const left = await waitForNoProcesses(workRoot);
  rmSync(workRoot, { recursive: true, force: true });
  rmSync(secretDir, { recursive: true, force: true });
  expect(left).toEqual([]);
});

describe('bubblewrap sandbox', () => {
  it('runs the kernel under bwrap over the ipc transport', async () => {
    const result = await run('import os\nprint(os.getcwd())');
    expect(result.status).toBe('ok');
    expect(textOf(result.content)).toBe(`${result.workDir}\n`);
    const processes = processesMatching(workRoot);
    expect(processes.some((line) => line.includes('bwrap') && line.includes('--unshare-net'))).toBe(
      true,
    );
    const connection = JSON.parse(
      readFileSync(join(result.workDir, '..', 'kernel.json'), 'utf8'),
    ) as { transport: string };
    expect(connection.transport).toBe('ipc');
  });

  it('has no network: no interfaces but loopback, the host loopback unreachable', async () => {
    const port = (server.address() as AddressInfo).port;
    const result = await run(
      [
        'import socket',
        'print(sorted(name for _, name in socket.if_nameindex()))',
        `for address in (("127.0.0.1", ${port}), ("1.1.1.1", 53)):`,
        '    s = socket.socket()',
        '    s.settimeout(3)',
        '    try:',
        '        s.connect(address)',
        '        print("connected", s.recv(100))',
        '    except OSError as e:',
        '        print("refused", type(e).__name__)',
        '    finally:',
        '        s.close()',
      ].join('\n'),
    );
    const lines = textOf(result.content).trim().split('\n');
    expect(lines[0]).toBe("['lo']");
    expect(lines[1]).toMatch(/^refused /);
    expect(lines[2]).toMatch(/^refused /);
  });

  it('cannot read host files outside the allowed directories', async () => {
    const result = await run(
      [
        `paths = [${JSON.stringify(secretFile)}, ${JSON.stringify(__filename)}, "/etc/passwd", "/etc/hostname", "/root", "/home"]`,
        'for path in paths:',
        '    try:',
        '        open(path).read()',
        '        print("READ", path)',
        '    except OSError as e:',
        '        print("denied", type(e).__name__)',
      ].join('\n'),
    );
    const text = textOf(result.content);
    expect(text).not.toContain('READ');
    expect(text.match(/denied/g)).toHaveLength(6);
  });

  it('refuses writes outside the work dir; writes inside reach the host', async () => {
    const result = await run(
      [
        'for path in ("/usr/evil", "/evil", "/etc/evil", "../home/evil-outside"):',
        '    try:',
        '        open(path, "w").write("x")',
        '        print("WROTE", path)',
        '    except OSError as e:',
        '        print("refused", type(e).__name__)',
        'open("inside.txt", "w").write("from the sandbox")',
      ].join('\n'),
    );
    const text = textOf(result.content);
    // ../home is the kernel's private home (writable by design); the others must be refused.
    expect(text.match(/refused/g)).toHaveLength(3);
    expect(text).not.toMatch(/WROTE \/(usr|etc|evil)/);
    expect(readFileSync(join(result.workDir, 'inside.txt'), 'utf8')).toBe('from the sandbox');
    expect(existsSync('/evil')).toBe(false);
    expect(result.createdFiles).toContain(join(result.workDir, 'inside.txt'));
  });

  it('runs in its own pid namespace and cannot see host processes', async () => {
    const result = await run(
      'import os\nprint(os.getpid(), len([p for p in os.listdir("/proc") if p.isdigit()]) < 10)',
    );
    const [pid, few] = textOf(result.content).trim().split(' ');
    expect(Number(pid)).toBeLessThan(10);
    expect(few).toBe('True');
  });

  it('interrupts with interrupt_request at the timeout and keeps state', async () => {
    await run('kept = "yes"');
    const result = await interpreter.run({
      sessionId: 'sandbox',
      code: 'while True:\n    pass',
      timeoutMs: 300,
    });
    expect(result.status).toBe('timeout');
    expect(result.stateLost).toBe(false);
    expect(textOf((await run('print(kept)')).content)).toBe('yes\n');
  });

  it('renders charts inside the sandbox', async () => {
    const result = await run(
      'import matplotlib.pyplot as plt\nplt.bar(["甲", "乙"], [1, 2])\nplt.show()',
    );
    expect(result.status).toBe('ok');
    expect(result.content.filter((block) => block.type === 'image')).toHaveLength(1);
    expect(textOf(result.content)).not.toMatch(/missing from/);
  });

  it('detects the death of a sandboxed kernel and starts a fresh one', async () => {
    const died = await run('import os\nos._exit(1)', 'dies');
    expect(died.status).toBe('died');
    const next = await run('print("fresh")', 'dies');
    expect(textOf(next.content)).toBe('fresh\n');
    await interpreter.closeSession('dies');
  });

  it('removes its ipc socket files on shutdown', async () => {
    const keeping = new CodeInterpreter({
      sandbox: 'bubblewrap',
      workRoot,
      poolSize: 0,
      removeWorkDirs: false,
    });
    const result = await keeping.run({ code: '1' });
    const ipcDir = join(result.workDir, '..', 'ipc');
    expect(readdirSync(ipcDir).sort()).toEqual(['k-1', 'k-2', 'k-3', 'k-4', 'k-5']);
    await keeping.close();
    expect(readdirSync(ipcDir)).toEqual([]);
  });
});
