import type { CliIO } from '../src/index.js';

/** An IO that records what the CLI writes. */
export function captureIO(): CliIO & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: (text) => {
      out += text;
    },
    stderr: (text) => {
      err += text;
    },
    color: false,
    out: () => out,
    err: () => err,
  };
}
