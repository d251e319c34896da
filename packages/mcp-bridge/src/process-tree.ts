import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';

/**
 * @internal The ids of every living descendant of `pid` (children, grandchildren …). Servers
 * started through `npx`, `uvx` or a shell are one process that starts the real one, and closing
 * the MCP transport only ends the first: the bridge finds the rest here so that it can end them too.
 */
export async function descendantsOf(pid: number): Promise<number[]> {
  const parents = await parentTable();
  const children = new Map<number, number[]>();
  for (const [child, parent] of parents) {
    const list = children.get(parent);
    if (list) list.push(child);
    else children.set(parent, [child]);
  }
  const out: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift()!;
    out.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return out;
}

/** Map of pid → parent pid, from /proc on Linux and from `ps` elsewhere. */
async function parentTable(): Promise<Map<number, number>> {
  const table = new Map<number, number>();
  if (process.platform === 'linux') {
    let entries: string[] = [];
    try {
      entries = await readdir('/proc');
    } catch {
      entries = [];
    }
    await Promise.all(
      entries
        .filter((entry) => /^\d+$/.test(entry))
        .map(async (entry) => {
          try {
            const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
            // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
            const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            table.set(Number(entry), Number(fields[1]));
          } catch {
            // The process ended while we were reading: it is no one's descendant any more.
          }
        }),
    );
    if (table.size > 0) return table;
  }
  if (process.platform === 'win32') return table;
  const output = await new Promise<string>((resolve) => {
    execFile('ps', ['-A', '-o', 'pid=,ppid='], (error, stdout) => resolve(error ? '' : stdout));
  });
  for (const line of output.split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (pid !== undefined && ppid !== undefined && !Number.isNaN(pid) && !Number.isNaN(ppid)) {
      table.set(pid, ppid);
    }
  }
  return table;
}

/** @internal True while a process with this id exists and has not exited (a zombie has). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // A zombie has exited and only waits for its parent to collect its status.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * @internal Send SIGTERM to each process, wait up to `graceMs` for them to exit, then SIGKILL the
 * ones still alive.
 */
export async function terminateAll(pids: readonly number[], graceMs = 1_000): Promise<void> {
  const living = pids.filter(isAlive);
  if (living.length === 0) return;
  for (const pid of living) signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && living.some(isAlive)) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  for (const pid of living) if (isAlive(pid)) signal(pid, 'SIGKILL');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}
