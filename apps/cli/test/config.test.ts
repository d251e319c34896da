import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ConfigurationError } from '@quiver/core';
import { ExitCode, loadConfig, missingModelReason, runCli } from '../src/index.js';
import { captureIO } from './helpers.js';

function configFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'quiver-config-'));
  const path = join(dir, 'quiver.config.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('configuration', () => {
  it('reads the file and lets the environment override it', () => {
    const path = configFile({
      model: { baseUrl: 'http://127.0.0.1:1/v1', model: 'from-file' },
      server: { port: 9000 },
    });
    const config = loadConfig({ path, env: { QUIVER_MODEL: 'from-env', QUIVER_PORT: '9100' } });
    expect(config.model.baseUrl).toBe('http://127.0.0.1:1/v1');
    expect(config.model.model).toBe('from-env');
    expect(config.server.port).toBe(9100);
    expect(config.source).toBe(path);
  });

  it('finds ./quiver.config.json by default and works without one', () => {
    const path = configFile({ knowledgeBases: { docs: { path: './kb' } } });
    expect(loadConfig({ cwd: join(path, '..'), env: {} }).knowledgeBases.docs?.path).toBe('./kb');
    expect(loadConfig({ cwd: tmpdir(), env: {} }).source).toBeUndefined();
  });

  it('names the file and the field that is wrong', () => {
    const path = configFile({ server: { port: 'eighty' } });
    expect(() => loadConfig({ path, env: {} })).toThrow(ConfigurationError);
    expect(() => loadConfig({ path, env: {} })).toThrow(/server\.port/);
    expect(() => loadConfig({ path: configFile('{not json'), env: {} })).toThrow(/not valid JSON/);
    expect(() => loadConfig({ path: '/nonexistent/quiver.json', env: {} })).toThrow(
      /does not exist/,
    );
  });

  it('says which env vars to set when no model is configured', () => {
    expect(missingModelReason(loadConfig({ cwd: tmpdir(), env: {} }))).toMatch(/OPENAI_API_KEY/);
    expect(missingModelReason(loadConfig({ cwd: tmpdir(), env: { OPENAI_API_KEY: 'k' } }))).toMatch(
      /QUIVER_MODEL/,
    );
    expect(
      missingModelReason(
        loadConfig({ cwd: tmpdir(), env: { OPENAI_API_KEY: 'k', QUIVER_MODEL: 'gpt-4o-mini' } }),
      ),
    ).toBeUndefined();
  });

  it('exits 2 with the message when the config file is invalid', async () => {
    const io = captureIO();
    const path = configFile({ server: { port: -1 } });
    const code = await runCli(['--config', path, 'serve', '--port', '0'], { io, env: {} });
    expect(code).toBe(ExitCode.usage);
    expect(io.err()).toMatch(/server\.port/);
  });
});
