import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ConfigurationError } from '@quiver/core';

/** A Python interpreter that can run ipykernel. */
export interface PythonInfo {
  /** The command as configured or found (e.g. `/usr/bin/python3`). */
  executable: string;
  /** `sys.executable` as Python reports it. */
  realExecutable: string;
  /** `sys.prefix` and `sys.base_prefix`: directories the sandbox must expose read-only. */
  prefixes: string[];
  /** `sys.path` entries (site-packages and friends), also exposed read-only in the sandbox. */
  paths: string[];
  pythonVersion: string;
  ipykernelVersion: string;
}

/** Environment variable naming the Python to use, checked before discovery. */
export const PYTHON_ENV_VAR = 'QUIVER_PYTHON';

// find_spec locates ipykernel without importing it (importing costs ~0.4 s).
const PROBE = [
  'import sys, json, importlib.util, importlib.metadata',
  'spec = importlib.util.find_spec("ipykernel")',
  'assert spec is not None, "no ipykernel"',
  'print(json.dumps({"executable": sys.executable, "prefixes": sorted({sys.prefix, sys.base_prefix}),',
  ' "paths": [p for p in sys.path if p], "python": sys.version.split()[0],',
  ' "ipykernel": importlib.metadata.version("ipykernel")}))',
].join('\n');

const probeCache = new Map<string, Promise<PythonInfo | undefined>>();

/** Run the probe once per candidate; `undefined` when it cannot import ipykernel. */
export function probePython(executable: string): Promise<PythonInfo | undefined> {
  let cached = probeCache.get(executable);
  if (!cached) {
    cached = new Promise((resolve) => {
      execFile(
        executable,
        ['-c', PROBE],
        { timeout: 20_000, env: { PATH: process.env.PATH ?? '' } },
        (error, stdout) => {
          if (error) return resolve(undefined);
          try {
            const parsed = JSON.parse(stdout.trim().split('\n').pop() ?? '') as {
              executable: string;
              prefixes: string[];
              paths: string[];
              python: string;
              ipykernel: string;
            };
            resolve({
              executable,
              realExecutable: parsed.executable,
              prefixes: parsed.prefixes,
              paths: parsed.paths,
              pythonVersion: parsed.python,
              ipykernelVersion: parsed.ipykernel,
            });
          } catch {
            resolve(undefined);
          }
        },
      );
    });
    probeCache.set(executable, cached);
  }
  return cached;
}

/**
 * The candidates tried by {@link findPython}, in order: `$QUIVER_PYTHON`, every `python3` and
 * `python` on `PATH`, then the usual system locations (Debian's `/usr/bin/python3` carries
 * `python3-ipykernel` even when a pyenv or venv Python shadows it on `PATH`).
 */
export function pythonCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const candidates: string[] = [];
  const fromEnv = env[PYTHON_ENV_VAR];
  if (fromEnv) candidates.push(fromEnv);
  for (const directory of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of ['python3', 'python']) {
      const path = join(directory, name);
      try {
        accessSync(path, constants.X_OK);
        candidates.push(path);
      } catch {
        // not there: keep looking
      }
    }
  }
  candidates.push('/usr/bin/python3', '/usr/local/bin/python3');
  return [...new Set(candidates)];
}

/**
 * Find a Python that can import ipykernel: `python` when given (it must work), otherwise the
 * first of {@link pythonCandidates} that does.
 *
 * @param options.python - an explicit interpreter; no fallback when it lacks ipykernel.
 * @returns what the interpreter reported about itself.
 * @throws {ConfigurationError} when no candidate can import ipykernel.
 * @example
 * const python = await findPython();
 * console.log(python.executable, python.ipykernelVersion);
 */
export async function findPython(options: { python?: string } = {}): Promise<PythonInfo> {
  const candidates = options.python ? [options.python] : pythonCandidates();
  // Probe all candidates at once (a pyenv shim alone can take a second), keep the first in order.
  const probes = candidates.map((candidate) => probePython(candidate));
  for (const probe of probes) {
    const info = await probe;
    if (info) return info;
  }
  throw new ConfigurationError(
    options.python
      ? `The configured Python "${options.python}" cannot import ipykernel. Install it (Debian: apt-get install python3-ipykernel; pip: pip install ipykernel) or point the "python" option / ${PYTHON_ENV_VAR} at a Python that has it.`
      : `No Python that can import ipykernel was found (tried ${candidates.join(', ')}). Install python3-ipykernel (Debian) or set ${PYTHON_ENV_VAR} to a Python with ipykernel.`,
  );
}
