import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import { makeWorkRoot, processesMatching } from './helpers.js';

// Each case runs a separate Node process that starts kernels and then ends in a different way;
// afterwards the process table must hold no kernel (or bwrap) of that process.
const workRoot = makeWorkRoot('qci-exit');
const buildDir = join(workRoot, 'build');
const packageRoot = join(__dirname, '..');

beforeAll(() => {
  // Compile src/ to CommonJS for the child processes (no dependency on a prior `pnpm build`).
  mkdirSync(buildDir, { recursive: true });
  const sourceDir = join(packageRoot, 'src');
  for (const name of readdirSync(sourceDir).filter((file) => file.endsWith('.ts'))) {
    const source = readFileSync(join(sourceDir, name), 'utf8');
    const output = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    });
    writeFileSync(join(buildDir, name.replace(/\.ts$/, '.js')), output.outputText);
  }
  writeFileSync(
    join(buildDir, 'child.js'),
    `
const { CodeInterpreter } = require('./code-interpreter.js');
const [mode, sandbox, root, poolSize] = process.argv.slice(2);
const interpreter = new CodeInterpreter({ sandbox, workRoot: root, poolSize: Number(poolSize) });
interpreter.run({ code: 'print("ready")' }).then((result) => {
  if (result.status !== 'ok') throw new Error('run failed: ' + JSON.stringify(result.content));
  // Act only when told, so the parent can first see the kernels in the process table.
  process.on('SIGUSR2', () => {
    if (mode === 'exit') process.exit(0);
    if (mode === 'throw') setTimeout(() => { throw new Error('simulated crash'); }, 10);
    if (mode === 'close') interpreter.close();
  });
  process.stdout.write('READY\\n');
  setInterval(() => undefined, 1000);
});
`,
  );
});

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(workRoot, { recursive: true, force: true });
});

const children = new Set<ChildProcess>();

function startChild(
  mode: string,
  sandbox: string,
  root: string,
  poolSize: number,
): { child: ChildProcess; ready: Promise<string> } {
  const child = spawn(
    process.execPath,
    [join(buildDir, 'child.js'), mode, sandbox, root, String(poolSize)],
    {
      env: { ...process.env, NODE_PATH: join(packageRoot, 'node_modules') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  child.on('exit', () => children.delete(child));
  let output = '';
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('READY')) resolve(output);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('exit', () =>
      output.includes('READY')
        ? resolve(output)
        : reject(new Error(`child exited early:\n${output}`)),
    );
  });
  return { child, ready };
}

// The warm pool is on in two cases (its kernel must be cleaned up too); off elsewhere to save time.
const cases: { mode: string; sandbox: string; signal?: NodeJS.Signals; pool: number }[] = [
  { mode: 'close', sandbox: 'none', pool: 0 },
  { mode: 'exit', sandbox: 'none', pool: 1 },
  { mode: 'throw', sandbox: 'none', pool: 0 },
  { mode: 'signal', sandbox: 'none', signal: 'SIGINT', pool: 0 },
  { mode: 'sigkill', sandbox: 'none', signal: 'SIGKILL', pool: 0 },
  { mode: 'signal', sandbox: 'bubblewrap', signal: 'SIGINT', pool: 0 },
  { mode: 'sigkill', sandbox: 'bubblewrap', signal: 'SIGKILL', pool: 1 },
];

/** Kernel (and bwrap) processes under `root`, leaving out the child Node process itself. */
function kernelsUnder(root: string): string[] {
  return processesMatching(root).filter((line) => !line.includes('child.js'));
}

async function waitForNoKernels(root: string): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  let left = kernelsUnder(root);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = kernelsUnder(root);
  }
  return left;
}

describe('no orphaned kernels', () => {
  it.each(cases)(
    'after $mode ($signal) with sandbox $sandbox, pool $pool',
    async ({ mode, sandbox, signal, pool }) => {
      const root = join(workRoot, `${mode}-${signal ?? 'none'}-${sandbox}`.slice(0, 24));
      mkdirSync(root, { recursive: true });
      const { child, ready } = startChild(mode, sandbox, root, pool);
      const exited = new Promise((resolve) => child.on('exit', resolve));
      await ready;
      expect(kernelsUnder(root).length).toBeGreaterThanOrEqual(1 + pool);
      child.kill(signal ?? 'SIGUSR2');
      if (mode === 'close') {
        expect(await waitForNoKernels(root)).toEqual([]);
        child.kill('SIGTERM');
      }
      await exited;
      expect(await waitForNoKernels(root)).toEqual([]);
    },
  );
});
