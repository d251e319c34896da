#!/usr/bin/env node
// Print one line for the whole monorepo's jest runs: "tests: N passed, N failed, N skipped".
// Reads <workspace>/test-results/jest.json written by @quiver/jest-config's reporter.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
const broken = [];
for (const area of ['packages', 'apps']) {
  const base = join(root, area);
  if (!existsSync(base)) continue;
  for (const name of readdirSync(base)) {
    const manifest = join(base, name, 'package.json');
    if (!existsSync(manifest)) continue;
    const scripts = JSON.parse(readFileSync(manifest, 'utf8')).scripts ?? {};
    if (!scripts.test) continue;
    const file = join(base, name, 'test-results', 'jest.json');
    if (!existsSync(file)) {
      missing.push(`${area}/${name}`);
      continue;
    }
    const result = JSON.parse(readFileSync(file, 'utf8'));
    passed += result.passed;
    failed += result.failed;
    skipped += result.skipped;
    if (result.runtimeErrorSuites > 0) broken.push(`${area}/${name}: ${result.failedSuites.join(', ')}`);
  }
}
for (const name of missing) console.log(`no test results from ${name} (its tests did not run)`);
for (const line of broken) console.log(`test files that failed to run: ${line}`);
// Suites that could not run and workspaces that never reported count as failures.
failed += missing.length + broken.length;
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 ? 1 : 0;
