/**
 * Kills every live kernel process group when Node exits, is interrupted, or crashes, so no
 * kernel outlives its parent. SIGKILL of Node itself cannot be caught: there the kernel's own
 * parent-death signal (prctl PR_SET_PDEATHSIG, or bubblewrap's --die-with-parent) does the work.
 * @internal
 */

const live = new Set<number>();
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let installed = false;

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Synchronously SIGKILL every registered kernel process group. */
export function killAllKernelsSync(): void {
  for (const pid of live) killGroup(pid);
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  killAllKernelsSync();
  // Keep Node's default behaviour (terminate) unless the application handles the signal itself.
  const others = process.listeners(signal).filter((listener) => listener !== onSignal);
  if (others.length === 0) {
    uninstall();
    process.kill(process.pid, signal);
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', killAllKernelsSync);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.removeListener('exit', killAllKernelsSync);
  for (const signal of SIGNALS) process.removeListener(signal, onSignal);
}

/** Track a kernel process group leader. */
export function registerKernelProcess(pid: number): void {
  live.add(pid);
  install();
}

/** Stop tracking a kernel process (it exited or was shut down). */
export function unregisterKernelProcess(pid: number): void {
  live.delete(pid);
  if (live.size === 0) uninstall();
}

/** Kill a kernel process group now (asynchronous callers use this after shutdown grace). */
export function killKernelProcessGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
