import type { CliIO } from './io.js';

/** A progress display on stderr (stdout stays clean for `--json`). */
export interface ProgressBar {
  /** `done` of `total` finished; `label` names the current item. */
  update(done: number, label?: string): void;
  /** Finish the bar (a newline on a terminal). */
  end(summary?: string): void;
}

/**
 * A progress bar that redraws in place when stderr is a terminal, and otherwise prints one plain
 * line per update (logs and CI stay readable, no escape codes).
 */
export function progressBar(
  io: CliIO,
  total: number,
  options: { width?: number } = {},
): ProgressBar {
  const width = options.width ?? 28;
  let lastLine = '';
  return {
    update(done, label = '') {
      const ratio = total === 0 ? 1 : Math.min(1, done / total);
      const percent = `${Math.round(ratio * 100)}`.padStart(3);
      if (io.stderrIsTTY) {
        const filled = Math.round(ratio * width);
        const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
        const shown = label.length > 40 ? `…${label.slice(-39)}` : label;
        const line = `${bar} ${percent}% ${done}/${total} ${shown}`;
        io.stderr(`\r${line.padEnd(lastLine.length)}`);
        lastLine = line;
      } else {
        io.stderr(`[${done}/${total}] ${percent}% ${label}\n`);
      }
    },
    end(summary) {
      if (io.stderrIsTTY && lastLine) io.stderr('\n');
      if (summary) io.stderr(`${summary}\n`);
    },
  };
}
