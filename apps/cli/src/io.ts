/** Where the CLI writes; injectable so commands run in-process in tests. */
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Use ANSI colours. */
  color: boolean;
  /** stderr is a terminal: progress bars redraw in place (otherwise they print a line per step). */
  stderrIsTTY?: boolean;
  /** Read the user's lines (interactive commands); default: the process's stdin. */
  stdin?: NodeJS.ReadableStream;
  /** stdin is a terminal: interactive commands show prompts. */
  stdinIsTTY?: boolean;
}

/** The process's stdout/stderr, coloured when stdout is a terminal and NO_COLOR is unset. */
export function processIO(): CliIO {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    color: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR,
    stderrIsTTY: Boolean(process.stderr.isTTY),
    stdin: process.stdin,
    stdinIsTTY: Boolean(process.stdin.isTTY),
  };
}

/** Meaningful exit codes, for scripts. */
export const ExitCode = {
  ok: 0,
  /** Something failed at run time (a demo step, an unreachable service). */
  failure: 1,
  /** The command line or the configuration is wrong. */
  usage: 2,
  /** The tool ran and answered with an error response. */
  toolError: 3,
} as const;

/** Tiny ANSI styling that turns itself off when colour is off. */
export function styles(io: CliIO) {
  const wrap = (open: number, close: number) => (text: string) =>
    io.color ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}
