import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ExitCode, runCli } from '../src/index.js';
import { everythingServerPath, sampleDocumentsDirectory } from '../src/index.js';
import { captureIO } from './helpers.js';

const samples = sampleDocumentsDirectory();
const temporary = () => mkdtempSync(join(tmpdir(), 'quiver-cli-test-'));

describe('quiver parse', () => {
  it('parses a real DOCX into text and a summary', async () => {
    const io = captureIO();
    const code = await runCli(['parse', join(__dirname, 'fixtures', 'tables.docx')], {
      io,
      env: {},
    });
    expect(code).toBe(ExitCode.ok);
    expect(io.out()).toMatch(/Top left/);
    expect(io.err()).toMatch(/docx, 1 page\(s\).*1 table/);
  });

  it('prints the structure as JSON', async () => {
    const io = captureIO();
    const code = await runCli(
      ['parse', join(samples, 'nics-background-checks-2015-11.pdf'), '--json'],
      {
        io,
        env: {},
      },
    );
    expect(code).toBe(ExitCode.ok);
    const document = JSON.parse(io.out()) as {
      format: string;
      pages: { blocks: { type: string }[] }[];
    };
    expect(document.format).toBe('pdf');
    expect(document.pages[0]!.blocks.some((block) => block.type === 'table')).toBe(true);
  });

  it('exits 1 with the parser message for a missing file', async () => {
    const io = captureIO();
    const code = await runCli(['parse', '/nonexistent/file.pdf'], { io, env: {} });
    expect(code).toBe(ExitCode.failure);
    expect(io.err()).toMatch(/nonexistent/);
  });
});

describe('quiver rag', () => {
  it('indexes a folder with progress on stderr, then answers a query with sources', async () => {
    const kb = join(temporary(), 'kb');
    const io = captureIO();
    const code = await runCli(['rag', 'index', samples, '--kb', kb, '--json'], { io, env: {} });
    expect(code).toBe(ExitCode.ok);
    const report = JSON.parse(io.out()) as { indexed: string[]; chunks: number; failed: unknown[] };
    expect(report.indexed).toHaveLength(3);
    expect(report.failed).toEqual([]);
    expect(report.chunks).toBeGreaterThan(3);
    // Not a terminal: one plain progress line per step, ending at 3/3.
    expect(io.err()).toMatch(/\[3\/3\] 100%/);
    expect(io.err()).not.toMatch(/\r/);

    const again = captureIO();
    await runCli(['rag', 'index', samples, '--kb', kb, '--json'], { io: again, env: {} });
    expect((JSON.parse(again.out()) as { unchanged: string[] }).unchanged).toHaveLength(3);

    const query = captureIO();
    const queryCode = await runCli(
      ['rag', 'query', 'How do I install Readability from npm?', '--kb', kb],
      {
        io: query,
        env: {},
      },
    );
    expect(queryCode).toBe(ExitCode.ok);
    expect(query.out()).toMatch(/\[1\] .*readability-README\.md.*Installation/);
    expect(query.out()).toMatch(/npm install @mozilla\/readability/);
  });

  it('draws a bar in place on a terminal', async () => {
    const kb = join(temporary(), 'kb');
    const io = { ...captureIO(), stderrIsTTY: true };
    let err = '';
    io.stderr = (text: string) => {
      err += text;
    };
    await runCli(['rag', 'index', join(samples, 'readability-README.md'), '--kb', kb], {
      io,
      env: {},
    });
    expect(err).toMatch(/\r█+ 100% 1\/1/);
  });

  it('says how to build a knowledge base that does not exist (exit 2)', async () => {
    const io = captureIO();
    const code = await runCli(['rag', 'query', 'anything', '--kb', join(temporary(), 'none')], {
      io,
      env: {},
    });
    expect(code).toBe(ExitCode.usage);
    expect(io.err()).toMatch(/quiver rag index/);
  });
});

describe('quiver mcp', () => {
  const configWith = (servers: Record<string, unknown>) => {
    const path = join(temporary(), 'quiver.config.json');
    writeFileSync(path, JSON.stringify({ mcpServers: servers }));
    return path;
  };

  it('lists and calls the tools of a real MCP server from the configuration', async () => {
    const config = configWith({
      everything: { command: process.execPath, args: [everythingServerPath(), 'stdio'] },
    });
    const list = captureIO();
    expect(await runCli(['--config', config, 'mcp', 'list', '--json'], { io: list, env: {} })).toBe(
      ExitCode.ok,
    );
    const listed = JSON.parse(list.out()) as {
      servers: { name: string; state: string; tools: { name: string }[] }[];
    };
    expect(listed.servers[0]).toMatchObject({ name: 'everything', state: 'connected' });
    expect(listed.servers[0]!.tools.map((tool) => tool.name)).toContain('everything__echo');

    const call = captureIO();
    const code = await runCli(
      ['--config', config, 'mcp', 'call', 'everything__get-sum', '--args', '{"a": 2, "b": 40}'],
      { io: call, env: {} },
    );
    expect(code).toBe(ExitCode.ok);
    expect(call.out()).toMatch(/42/);
  });

  it('reports a server that cannot start (exit 1) and a missing configuration (exit 2)', async () => {
    const broken = captureIO();
    const config = configWith({ broken: { command: '/nonexistent/mcp-server' } });
    expect(await runCli(['--config', config, 'mcp', 'list'], { io: broken, env: {} })).toBe(
      ExitCode.failure,
    );
    expect(broken.out()).toMatch(/broken .*failed/);
    const none = captureIO();
    expect(await runCli(['--config', configWith({}), 'mcp', 'list'], { io: none, env: {} })).toBe(
      ExitCode.usage,
    );
    expect(none.err()).toMatch(/mcpServers/);
  });
});

describe('quiver exec', () => {
  it('runs code in a real kernel and streams its output', async () => {
    const io = captureIO();
    const code = await runCli(
      ['exec', '-c', 'import sys\nprint(6 * 7)\nprint(sys.version_info[0])'],
      {
        io,
        env: {},
      },
    );
    expect(code).toBe(ExitCode.ok);
    expect(io.out()).toMatch(/^42\n3\n/);
  });

  it('runs a file, saves its chart as a PNG and prints the path', async () => {
    const dir = temporary();
    const file = join(dir, 'chart.py');
    writeFileSync(file, 'import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()\n');
    const io = captureIO();
    const config = join(dir, 'quiver.config.json');
    writeFileSync(config, JSON.stringify({ workDir: join(dir, 'out') }));
    const code = await runCli(['--config', config, 'exec', file], { io, env: {} });
    expect(code).toBe(ExitCode.ok);
    const path = /\[image\] (\S+\.png)/.exec(io.out())?.[1];
    expect(path?.startsWith(join(dir, 'out'))).toBe(true);
    expect(readFileSync(path!).subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it('exits 3 with the traceback when the code fails', async () => {
    const io = captureIO();
    const code = await runCli(['exec', '-c', '1 / 0', '--json'], { io, env: {} });
    expect(code).toBe(ExitCode.toolError);
    const response = JSON.parse(io.out()) as { isError: boolean; content: { text?: string }[] };
    expect(response.isError).toBe(true);
    expect(JSON.stringify(response.content)).toMatch(/ZeroDivisionError/);
  });

  it('keeps a --session in a running server, and says so when none runs', async () => {
    const serveIO = captureIO();
    let stop!: () => void;
    const serving = runCli(['serve', '--port', '0', '--json', '--data-dir', temporary()], {
      io: serveIO,
      env: {},
      onStop: (fn) => (stop = fn),
    });
    for (let attempt = 0; attempt < 1000 && !serveIO.out().includes('url'); attempt++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const { url } = JSON.parse(serveIO.out().trim().split('\n')[0]!) as { url: string };
    try {
      const env = { QUIVER_SERVER_URL: url };
      const first = captureIO();
      expect(
        await runCli(['exec', '--session', 'a', '-c', 'counter = 41'], { io: first, env }),
      ).toBe(ExitCode.ok);
      const second = captureIO();
      expect(
        await runCli(['exec', '--session', 'a', '-c', 'counter += 1\nprint(counter)'], {
          io: second,
          env,
        }),
      ).toBe(ExitCode.ok);
      expect(second.out()).toMatch(/^42/);
      const other = captureIO();
      expect(
        await runCli(['exec', '--session', 'b', '-c', 'print(counter)'], { io: other, env }),
      ).toBe(ExitCode.toolError);
    } finally {
      stop();
      expect(await serving).toBe(ExitCode.ok);
    }
    const offline = captureIO();
    const code = await runCli(['exec', '--session', 'a', '-c', 'print(1)'], {
      io: offline,
      env: { QUIVER_SERVER_URL: url },
    });
    expect(code).toBe(ExitCode.failure);
    expect(offline.err()).toMatch(/start one with `quiver serve`/);
  });

  it('needs a file or -c (exit 2)', async () => {
    const io = captureIO();
    expect(await runCli(['exec'], { io, env: {} })).toBe(ExitCode.usage);
    expect(existsSync('/nonexistent')).toBe(false);
  });
});
