import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { PythonInfo } from './python-discovery.js';

/**
 * The exit code of a kernel that could not bind a port of its connection file because another
 * process took it first (the ports are found free by Node, then released for the kernel).
 * @internal
 */
export const KERNEL_PORT_TAKEN_EXIT = 98;

/**
 * Python run with `-c` in place of `python -m ipykernel_launcher`: it applies the resource limits
 * and the parent-death signal to itself, then starts ipykernel as the launcher does
 * (`IPKernelApp.launch_instance`), minus two imports this client never needs. A port taken
 * before the kernel could bind it ends the process with {@link KERNEL_PORT_TAKEN_EXIT}.
 * @internal
 */
export const KERNEL_BOOTSTRAP = `
import os, sys, resource
parent = int(os.environ.pop("QUIVER_PARENT_PID", "0") or 0)
if parent:
    # Die with Node even when Node is SIGKILLed (no exit handler runs then).
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except Exception:
        pass
    if os.getppid() != parent:
        os._exit(1)
for name, variable, grace in (("RLIMIT_AS", "QUIVER_RLIMIT_AS", 0), ("RLIMIT_CPU", "QUIVER_RLIMIT_CPU", 5), ("RLIMIT_NPROC", "QUIVER_RLIMIT_NPROC", 0)):
    value = int(os.environ.pop(variable, "0") or 0)
    if value:
        resource.setrlimit(getattr(resource, name), (value, value + grace))
# Neither the kernel debugger (debugpy) nor jedi completion is used by this client; keeping
# ipykernel and IPython from importing them saves ~250 ms of start-up. They are importable again
# once the kernel is initialised.
blocked = [name for name in ("debugpy", "jedi") if name not in sys.modules]
for name in blocked:
    sys.modules[name] = None
sys.argv = ["ipykernel_launcher"] + sys.argv[1:]
if sys.path and sys.path[0] in ("", "-c"):
    sys.path[0] = os.getcwd()
from ipykernel.kernelapp import IPKernelApp
app = IPKernelApp.instance()
try:
    app.initialize()
except Exception as error:
    import errno
    if getattr(error, "errno", None) == errno.EADDRINUSE:
        sys.stderr.write("quiver: a port of the connection file was taken by another process\\n")
        sys.stderr.flush()
        os._exit(${KERNEL_PORT_TAKEN_EXIT})
    raise
for name in blocked:
    if sys.modules.get(name, 0) is None:
        del sys.modules[name]
app.start()
`;

/** Fonts that render Chinese, Japanese and Korean, tried in order before the defaults. */
const CJK_FONTS = [
  'WenQuanYi Micro Hei',
  'WenQuanYi Zen Hei',
  'Noto Sans CJK SC',
  'Noto Sans CJK JP',
  'Source Han Sans SC',
  'SimHei',
  'Microsoft YaHei',
];

/** matplotlib configuration for every kernel: headless inline (Agg) backend, CJK fonts first. */
export const MATPLOTLIBRC = [
  'backend: module://matplotlib_inline.backend_inline',
  'font.family: sans-serif',
  `font.sans-serif: ${[...CJK_FONTS, 'DejaVu Sans', 'Bitstream Vera Sans', 'Arial', 'sans-serif'].join(', ')}`,
  'axes.unicode_minus: False',
  '',
].join('\n');

const fontCaches = new Map<string, Promise<string | undefined>>();

/**
 * Build matplotlib's font list once per Python and machine (it takes seconds) in a shared cache
 * directory; each kernel gets a copy so a first plot does not pay for it.
 * @internal
 */
export function ensureFontCache(python: PythonInfo): Promise<string | undefined> {
  let cached = fontCaches.get(python.realExecutable);
  if (!cached) {
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    const directory = join(tmpdir(), `quiver-mpl-cache-${uid}-${python.pythonVersion}`);
    cached = (async () => {
      await mkdir(directory, { recursive: true, mode: 0o700 });
      if ((await fontListFiles(directory)).length === 0) {
        await new Promise<void>((resolve) => {
          execFile(
            python.executable,
            ['-c', 'import matplotlib.font_manager'],
            { timeout: 120_000, env: { PATH: process.env.PATH ?? '', MPLCONFIGDIR: directory } },
            () => resolve(),
          );
        });
      }
      return (await fontListFiles(directory)).length > 0 ? directory : undefined;
    })().catch(() => undefined);
    fontCaches.set(python.realExecutable, cached);
  }
  return cached;
}

async function fontListFiles(directory: string): Promise<string[]> {
  try {
    return (await readdir(directory)).filter((name) => /^fontlist-.*\.json$/.test(name));
  } catch {
    return [];
  }
}

/** Write the kernel's private configuration directories (matplotlib, IPython, Jupyter). @internal */
export async function prepareKernelHome(
  home: string,
  fontCache: string | undefined,
): Promise<void> {
  const mplConfig = join(home, '.config', 'matplotlib');
  await mkdir(mplConfig, { recursive: true, mode: 0o700 });
  await mkdir(join(home, '.ipython'), { recursive: true });
  await writeFile(join(mplConfig, 'matplotlibrc'), MATPLOTLIBRC);
  if (fontCache) {
    for (const name of await fontListFiles(fontCache)) {
      await copyFile(join(fontCache, name), join(mplConfig, name)).catch(() => undefined);
    }
  }
}

/**
 * The kernel's environment. Built from scratch rather than inherited, so API keys and other
 * secrets in Node's environment are not visible to model-written code.
 * @internal
 */
export function kernelEnvironment(options: {
  python: PythonInfo;
  home: string;
  tmp: string;
  sandboxed: boolean;
  memoryLimitMb?: number | undefined;
  cpuTimeLimitSeconds?: number | undefined;
  maxProcesses?: number | undefined;
  extra?: Record<string, string> | undefined;
}): Record<string, string> {
  const pythonBin = dirname(options.python.realExecutable);
  const env: Record<string, string> = {
    PATH: [...new Set([pythonBin, '/usr/local/bin', '/usr/bin', '/bin'])].join(':'),
    HOME: options.home,
    USER: 'sandbox',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TMPDIR: options.tmp,
    PYTHONIOENCODING: 'utf-8',
    MPLBACKEND: 'module://matplotlib_inline.backend_inline',
    MPLCONFIGDIR: join(options.home, '.config', 'matplotlib'),
    IPYTHONDIR: join(options.home, '.ipython'),
    JUPYTER_CONFIG_DIR: join(options.home, '.jupyter'),
    JUPYTER_DATA_DIR: join(options.home, '.local', 'share', 'jupyter'),
    JUPYTER_RUNTIME_DIR: join(options.home, '.local', 'share', 'jupyter', 'runtime'),
    JUPYTER_PLATFORM_DIRS: '1',
    PYDEVD_DISABLE_FILE_VALIDATION: '1',
  };
  if (!options.sandboxed) {
    env.QUIVER_PARENT_PID = String(process.pid);
    // ipykernel also polls for its parent; inside a new pid namespace this must stay unset.
    env.JPY_PARENT_PID = String(process.pid);
  }
  if (options.memoryLimitMb)
    env.QUIVER_RLIMIT_AS = String(Math.floor(options.memoryLimitMb * 1024 * 1024));
  if (options.cpuTimeLimitSeconds)
    env.QUIVER_RLIMIT_CPU = String(Math.ceil(options.cpuTimeLimitSeconds));
  if (options.maxProcesses) env.QUIVER_RLIMIT_NPROC = String(options.maxProcesses);
  return { ...env, ...options.extra };
}
