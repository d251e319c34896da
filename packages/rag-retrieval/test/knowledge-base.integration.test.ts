import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { HashedNgramEmbedder, KnowledgeBase } from '../src/index.js';
import { chunk, temporaryDirectory } from './helpers.js';

const children = join(__dirname, 'fixtures', 'child');
const embedder = () => new HashedNgramEmbedder({ dimensions: 64 });
// Child processes start slowly on a busy machine (they transpile the sources); no wall-clock assertions here.

function start(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, [join(children, script), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Resolve when the child prints a line matching `pattern`. */
function waitForLine(child: ChildProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let errors = '';
    const onData = (data: Buffer) => {
      buffer += data.toString();
      if (pattern.test(buffer)) {
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (data: Buffer) => (errors += data.toString()));
    child.once('exit', (code) =>
      reject(new Error(`child exited (${code}) before printing ${pattern}: ${errors}`)),
    );
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null
      ? resolve()
      : child.once('exit', () => resolve()),
  );
}

describe('KnowledgeBase with real processes', () => {
  let directory: { path: string; cleanup: () => void };
  const running: ChildProcess[] = [];
  beforeEach(async () => {
    directory = temporaryDirectory();
    const knowledgeBase = await KnowledgeBase.open({
      directory: directory.path,
      embedder: embedder(),
    });
    for (let i = 0; i < 5; i++) {
      await knowledgeBase.addDocument({
        source: `base-${i}`,
        chunks: [chunk(`base-${i}`, `supersonic flutter base ${i}`)],
      });
    }
    await knowledgeBase.commit();
    await knowledgeBase.close();
  });
  afterEach(async () => {
    for (const child of running.splice(0)) {
      child.kill('SIGKILL');
      await exited(child);
    }
    directory.cleanup();
  });

  // Kill the writer at different moments of a commit: the previous generation must always open.
  it.each([0, 10, 40])(
    'survives a writer killed %i ms into a commit',
    async (delay) => {
      const writer = start('kb-writer.cjs', [directory.path, '15']);
      running.push(writer);
      await waitForLine(writer, /committed 0\n/);
      await waitForLine(writer, /committing 1\n/);
      await new Promise((resolve) => setTimeout(resolve, delay));
      writer.kill('SIGKILL');
      await exited(writer);

      const knowledgeBase = await KnowledgeBase.open({
        directory: directory.path,
        embedder: embedder(),
      });
      const count = knowledgeBase.documents().length;
      // The base documents plus whole rounds of 15 only: a commit is all or nothing. (How many
      // rounds got in before the kill depends on the machine's speed; a partial round never does.)
      expect(count).toBeGreaterThanOrEqual(20);
      expect((count - 5) % 15).toBe(0);
      expect(knowledgeBase.getDocument('base-0')).toBeDefined();
      expect(
        (await knowledgeBase.search({ query: 'supersonic flutter', topK: 3 })).hits,
      ).toHaveLength(3);
      // The stale lock was taken over and half-written temporary files were removed.
      expect(readdirSync(directory.path).filter((name) => name.includes('.tmp-'))).toEqual([]);
      await knowledgeBase.addDocument({
        source: 'after-crash',
        chunks: [chunk('after-crash', 'recovered writer')],
      });
      await knowledgeBase.commit();
      await knowledgeBase.close();
    },
    120_000,
  );

  it('lets reader processes open and search while a writer process commits', async () => {
    const writer = start('kb-writer.cjs', [directory.path, '10', '8']);
    running.push(writer);
    await waitForLine(writer, /committed 0\n/);
    const readers = [
      start('kb-reader.cjs', [directory.path, '8']),
      start('kb-reader.cjs', [directory.path, '8']),
    ];
    running.push(...readers);
    const outputs = await Promise.all(
      readers.map(
        (reader) =>
          new Promise<string>((resolve) => {
            let output = '';
            reader.stdout!.on('data', (data: Buffer) => (output += data.toString()));
            reader.once('exit', () => resolve(output));
          }),
      ),
    );
    for (const output of outputs) {
      const { failures, counts } = JSON.parse(output) as { failures: string[]; counts: number[] };
      expect(failures).toEqual([]);
      expect(counts).toHaveLength(8);
      // Every reader saw a whole generation: the base documents plus whole rounds of ten.
      for (const count of counts) expect((count - 5) % 10).toBe(0);
    }
  }, 120_000);
});
