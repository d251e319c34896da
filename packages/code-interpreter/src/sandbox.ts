import { execFile } from 'node:child_process';
import { accessSync, constants, lstatSync, readlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { PythonInfo } from './python-discovery.js';

/**
 * How kernels are isolated: `bubblewrap` runs each kernel in a bubblewrap sandbox (no network,
 * own pid namespace, read-only system directories, only the work dir writable); `none` runs it as
 * a plain child process; `auto` (the default) uses bubblewrap when it works on this machine.
 */
export type SandboxMode = 'auto' | 'bubblewrap' | 'none';

/** What sandbox detection found. */
export interface SandboxStatus {
  /** The mode kernels will actually run in. */
  mode: 'bubblewrap' | 'none';
  /** True when bubblewrap is installed and a trial sandbox started. */
  bubblewrapAvailable: boolean;
  /** Path of the bwrap binary, when found. */
  bubblewrapPath?: string;
  /** One line a person can read: why this mode. */
  reason: string;
}

/** Directories exposed read-only when they exist; `/etc` only in part (no passwd, no hosts). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
const ETC_ENTRIES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/alternatives',
  '/etc/fonts',
  '/etc/mime.types',
];

function findBubblewrap(): string | undefined {
  const directories = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'];
  for (const directory of directories.filter(Boolean)) {
    const path = join(directory, 'bwrap');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** `--ro-bind` for real directories, `--symlink` for merged-/usr links such as `/bin -> usr/bin`. */
function systemMounts(): string[] {
  const args: string[] = [];
  for (const path of SYSTEM_DIRS) {
    if (!exists(path)) continue;
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else args.push('--ro-bind', path, path);
  }
  for (const path of ETC_ENTRIES) if (exists(path)) args.push('--ro-bind', path, path);
  return args;
}

let detection: Promise<SandboxStatus> | undefined;

/**
 * Find out whether bubblewrap works here by starting a trial sandbox with the same namespace
 * flags kernels use. Cached for the life of the process.
 *
 * @example
 * const status = await detectSandbox();
 * console.log(status.mode, status.reason);
 */
export function detectSandbox(): Promise<SandboxStatus> {
  detection ??= new Promise((resolve) => {
    const bwrap = findBubblewrap();
    if (!bwrap) {
      resolve({
        mode: 'none',
        bubblewrapAvailable: false,
        reason:
          'bubblewrap (bwrap) is not installed; kernels run unsandboxed. Install the "bubblewrap" package to sandbox them.',
      });
      return;
    }
    const args = [
      '--unshare-net',
      '--unshare-pid',
      '--die-with-parent',
      ...systemMounts(),
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      'true',
    ];
    execFile(bwrap, args, { timeout: 10_000 }, (error, _stdout, stderr) => {
      resolve(
        error
          ? {
              mode: 'none',
              bubblewrapAvailable: false,
              bubblewrapPath: bwrap,
              reason: `bubblewrap is installed but cannot create namespaces here (${String(stderr).trim() || error.message}); kernels run unsandboxed.`,
            }
          : {
              mode: 'bubblewrap',
              bubblewrapAvailable: true,
              bubblewrapPath: bwrap,
              reason:
                'bubblewrap works: kernels run without network, in their own pid namespace, with read-only system directories.',
            },
      );
    });
  });
  return detection;
}

/** Inputs for {@link bubblewrapArguments}. @internal */
export interface BubblewrapLayout {
  python: PythonInfo;
  /** The session's private root (work dir, home, ipc sockets): bound writable at the same path. */
  sessionRoot: string;
  workDir: string;
  /** Extra host paths to expose read-only. */
  readOnlyPaths?: string[];
}

/**
 * The bwrap command-line arguments (without the command) for one kernel.
 * @internal
 */
export function bubblewrapArguments(layout: BubblewrapLayout): string[] {
  const args = [
    '--die-with-parent',
    '--unshare-net',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--new-session',
    '--hostname',
    'sandbox',
    ...systemMounts(),
  ];
  // A Python outside /usr (pyenv, venv) needs its own prefix and site-packages.
  const pythonPaths = [
    ...layout.python.prefixes,
    ...layout.python.paths,
    ...(layout.readOnlyPaths ?? []),
  ];
  for (const path of new Set(pythonPaths)) {
    if (path.startsWith('/usr/') || path === '/usr' || path.startsWith(layout.sessionRoot))
      continue;
    args.push('--ro-bind-try', path, path);
  }
  args.push(
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--bind',
    layout.sessionRoot,
    layout.sessionRoot,
  );
  if (!layout.workDir.startsWith(`${layout.sessionRoot}/`))
    args.push('--bind', layout.workDir, layout.workDir);
  // The sandbox's root is bwrap's own tmpfs; make it read-only so only /tmp (private, in memory)
  // and the session directory are writable.
  args.push('--remount-ro', '/', '--chdir', layout.workDir);
  return args;
}
