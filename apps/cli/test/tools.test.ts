import { describe, expect, it } from '@jest/globals';
import { ExitCode, runCli } from '../src/index.js';
import { captureIO } from './helpers.js';

describe('quiver tools', () => {
  it('lists the tools as JSON with their schemas', async () => {
    const io = captureIO();
    const code = await runCli(['tools', 'list', '--json'], { io });
    expect(code).toBe(ExitCode.ok);
    const rows = JSON.parse(io.out()) as {
      name: string;
      group: string;
      active: boolean;
      parameters: { type: string };
    }[];
    expect(rows.map((row) => row.name)).toEqual(
      expect.arrayContaining([
        'calculator',
        'current_time',
        'countdown',
        'code_interpreter',
        'python_executor',
        'doc_parser',
        'retrieval',
        'web_extractor',
      ]),
    );
    for (const row of rows) {
      expect(row.parameters.type).toBe('object');
      expect(row.active).toBe(true);
    }
  });

  it('lists descriptions in Chinese with --lang zh', async () => {
    const io = captureIO();
    await runCli(['tools', 'list', '--lang', 'zh'], { io });
    expect(io.out()).toMatch(/计算算术表达式/);
  });

  it('calls a tool and prints its result', async () => {
    const io = captureIO();
    const code = await runCli(['tools', 'call', 'calculator', '--args', '{"expression":"6*7"}'], {
      io,
    });
    expect(code).toBe(ExitCode.ok);
    expect(io.out().trim()).toBe(String(6 * 7));
  });

  it('prints the whole response with --json', async () => {
    const io = captureIO();
    await runCli(['tools', 'call', 'calculator', '--args', '{"expression":"2^10"}', '--json'], {
      io,
    });
    const response = JSON.parse(io.out()) as { content: { text: string }[]; isLast: boolean };
    expect(response.content[0]!.text).toBe(String(2 ** 10));
    expect(response.isLast).toBe(true);
  });

  it('exits 3 and explains when the arguments are invalid', async () => {
    const io = captureIO();
    const code = await runCli(['tools', 'call', 'calculator', '--args', '{"expr":"1"}'], { io });
    expect(code).toBe(ExitCode.toolError);
    expect(io.err()).toMatch(/"expression": is required/);
  });

  it('exits 3 for an unknown tool, naming the available ones', async () => {
    const io = captureIO();
    const code = await runCli(['tools', 'call', 'nope'], { io });
    expect(code).toBe(ExitCode.toolError);
    expect(io.err()).toMatch(/does not exist.*calculator/s);
  });

  it('exits 2 on a usage error', async () => {
    const io = captureIO();
    const code = await runCli(['tools', 'frobnicate'], { io });
    expect(code).toBe(ExitCode.usage);
  });
});
