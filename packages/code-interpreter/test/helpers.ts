import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh, short work root: its path marks this test's kernels in the process table. */
export function makeWorkRoot(prefix = 'qci'): string {
  return mkdtempSync(join(tmpdir(), `${prefix}-`));
}

/** Processes whose command line mentions `marker` (excluding `ps` itself). */
export function processesMatching(marker: string): string[] {
  const output = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return (
    output
      .split('\n')
      .filter((line) => line.includes(marker) && !/\bps -eo\b/.test(line))
      // Zombies are already dead; they only wait for their parent to reap them.
      .filter((line) => !/^\s*\d+\s+Z/.test(line))
  );
}

/** Wait (polling) until no live process mentions `marker`; returns what is left after `timeoutMs`. */
export async function waitForNoProcesses(marker: string, timeoutMs = 10_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let left = processesMatching(marker);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = processesMatching(marker);
  }
  return left;
}

/** Text of all text blocks. */
export function textOf(content: { type: string; text?: string }[]): string {
  return content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('');
}
