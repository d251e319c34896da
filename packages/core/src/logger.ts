/** Minimal structured logger; adapt pino, winston or console to it in one line. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Logger thresholds, from most to least verbose; `silent` drops everything. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** A logger that drops everything. */
export const silentLogger: Logger = Object.freeze({
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
});

/** A logger writing one line per record to stderr, at `level` and above. */
export function createConsoleLogger(options: { level?: LogLevel; prefix?: string } = {}): Logger {
  const threshold = order[options.level ?? 'info'];
  const prefix = options.prefix ? `[${options.prefix}] ` : '';
  const write =
    (level: Exclude<LogLevel, 'silent'>) => (message: string, fields?: Record<string, unknown>) => {
      if (order[level] < threshold) return;
      const tail = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
      process.stderr.write(`${prefix}${level}: ${message}${tail}\n`);
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
