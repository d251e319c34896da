#!/usr/bin/env node
// Proves each package under packages/ is independently publishable:
//   1. `pnpm pack` it (workspace:^ ranges become real versions, only `files` are included);
//   2. publint and arethetypeswrong lint the tarball's package.json, exports and types;
//   3. install the tarball into an empty temp project with only its declared dependencies
//      (siblings come from their own tarballs, everything else from the registry);
//   4. import every export subpath with ESM `import` and CommonJS `require`;
//   5. type-check a consumer file against the published declarations (skipLibCheck off).
// A package that reaches into a sibling's src/, or forgets a dependency, fails here.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const only = process.argv.slice(2);
const keep = process.env.QUIVER_KEEP_PUBLISH_CHECK === '1';

const packages = readdirSync(join(root, 'packages'))
  .map((name) => join(root, 'packages', name))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ manifest }) => !manifest.private);

const work = mkdtempSync(join(tmpdir(), 'quiver-publish-'));
const tarballs = join(work, 'tarballs');
mkdirSync(tarballs);

async function sh(command, args, options = {}) {
  try {
    return await run(command, args, { maxBuffer: 64 * 1024 * 1024, ...options });
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim();
    throw new Error(`${command} ${args.join(' ')} failed:\n${output}`);
  }
}

// 1. Pack every package first: a package's siblings are installed from their tarballs.
const packed = new Map();
for (const { dir, manifest } of packages) {
  const { stdout } = await sh('pnpm', ['pack', '--pack-destination', tarballs], { cwd: dir });
  const file = stdout.trim().split('\n').pop().trim();
  packed.set(manifest.name, file.startsWith('/') ? file : join(tarballs, file));
}

function subpaths(manifest) {
  return Object.keys(manifest.exports ?? { '.': {} })
    .filter((key) => key !== './package.json' && !key.includes('*'))
    .map((key) => (key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`));
}

async function check({ manifest }) {
  const name = manifest.name;
  const tarball = packed.get(name);
  const problems = [];
  // 2. Lint the packed package.
  try {
    await sh(bin('publint'), ['run', tarball, '--strict']);
  } catch (error) {
    problems.push(`publint: ${error.message}`);
  }
  try {
    await sh(bin('attw'), [tarball, '--format', 'ascii', '--profile', 'node16']);
  } catch (error) {
    problems.push(`arethetypeswrong: ${error.message}`);
  }
  // 3. Install into an empty project.
  const project = join(work, name.replace('/', '__'));
  mkdirSync(project);
  const overrides = Object.fromEntries([...packed].map(([sibling, file]) => [sibling, `file:${file}`]));
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify(
      {
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: { [name]: `file:${tarball}` },
        devDependencies: { '@types/node': '^20.19.0' },
        overrides,
      },
      null,
      2,
    ),
  );
  try {
    await sh('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts=false', '--loglevel=error'], { cwd: project });
  } catch (error) {
    problems.push(`install: ${error.message}`);
    return problems;
  }
  // 4. Load every entry point both ways.
  const entries = subpaths(manifest);
  for (const entry of entries) {
    const esm = `const m = await import(${JSON.stringify(entry)}); if (Object.keys(m).length === 0) { console.error('no exports'); process.exit(1); }`;
    const cjs = `const m = require(${JSON.stringify(entry)}); if (Object.keys(m).length === 0) { console.error('no exports'); process.exit(1); }`;
    try {
      await sh(process.execPath, ['--input-type=module', '-e', esm], { cwd: project });
    } catch (error) {
      problems.push(`ESM import of ${entry}: ${error.message}`);
    }
    try {
      await sh(process.execPath, ['--input-type=commonjs', '-e', cjs], { cwd: project });
    } catch (error) {
      problems.push(`CommonJS require of ${entry}: ${error.message}`);
    }
  }
  // 5. Type-check consumers (ESM and CommonJS) against the shipped declarations.
  writeFileSync(
    join(project, 'consumer.mts'),
    entries.map((entry, index) => `import * as api${index} from ${JSON.stringify(entry)};\nexport const names${index}: string[] = Object.keys(api${index});\n`).join(''),
  );
  writeFileSync(
    join(project, 'consumer.cts'),
    entries.map((entry, index) => `import api${index} = require(${JSON.stringify(entry)});\nexport const names${index}: string[] = Object.keys(api${index});\n`).join(''),
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
      },
      files: ['consumer.mts', 'consumer.cts'],
    }),
  );
  try {
    await sh(bin('tsc'), ['-p', project]);
  } catch (error) {
    problems.push(`type check: ${error.message}`);
  }
  return problems;
}

const selected = packages.filter(({ manifest }) => only.length === 0 || only.includes(manifest.name));
let failures = 0;
// Two at a time: installs are mostly network and disk waits.
const queue = [...selected];
const workers = Array.from({ length: 2 }, async () => {
  for (let item = queue.shift(); item; item = queue.shift()) {
    const problems = await check(item);
    if (problems.length === 0) console.log(`✔ ${item.manifest.name} is publishable`);
    else {
      failures++;
      console.log(`✘ ${item.manifest.name}:\n  ${problems.join('\n  ').replace(/\n/g, '\n    ')}`);
    }
  }
});
await Promise.all(workers);
if (!keep) rmSync(work, { recursive: true, force: true });
else console.log(`kept ${work}`);
console.log(`publishability: ${selected.length - failures} of ${selected.length} packages pass`);
process.exitCode = failures > 0 ? 1 : 0;
