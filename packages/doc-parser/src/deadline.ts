import { DocumentParseError } from './errors.js';

/**
 * @internal A time limit plus the caller's signal, checked cooperatively by the format
 * parsers between pages, zip entries and rows. `signal` fires on either, so asynchronous work
 * (pdf.js, fetch) can be torn down instead of running on in the background.
 */
export class Deadline {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout> | undefined;
  private reason: DocumentParseError | undefined;
  private lastYield = Date.now();

  constructor(
    readonly timeoutMs: number,
    private readonly source: string | undefined,
    external?: AbortSignal,
  ) {
    this.signal = this.controller.signal;
    if (external?.aborted) {
      this.fail('aborted');
    } else {
      external?.addEventListener('abort', () => this.fail('aborted'), { once: true });
      if (Number.isFinite(timeoutMs)) {
        this.timer = setTimeout(() => this.fail('timeout'), Math.max(0, timeoutMs));
        this.timer.unref?.();
      }
    }
  }

  /** Throw the timeout/abort error if the deadline has passed. */
  check(): void {
    if (this.reason) throw this.reason;
  }

  /**
   * Check, and every ~25 ms give the event loop a turn so the timer and abort listeners can
   * fire during long synchronous stretches of work.
   */
  async tick(): Promise<void> {
    this.check();
    if (Date.now() - this.lastYield > 25) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.lastYield = Date.now();
      this.check();
    }
  }

  /** Race `work` against the deadline, so a stuck await still ends on time. */
  async race<T>(work: Promise<T>): Promise<T> {
    // `work` may reject after the deadline has won (or before we look at it): never leave that unhandled.
    work.catch(() => undefined);
    this.check();
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      onAbort = () => reject(this.reason);
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work, stopped]);
    } finally {
      if (onAbort) this.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Stop the timer (call when the parse is over). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  private fail(kind: 'timeout' | 'aborted'): void {
    if (this.reason) return;
    const where = this.source ? ` "${this.source}"` : '';
    this.reason =
      kind === 'timeout'
        ? new DocumentParseError(
            'timeout',
            `Parsing${where} did not finish within ${this.timeoutMs} ms and was stopped. Raise timeoutMs, or split the document into smaller files.`,
            { source: this.source },
          )
        : new DocumentParseError('aborted', `Parsing${where} was cancelled.`, {
            source: this.source,
          });
    if (this.timer) clearTimeout(this.timer);
    this.controller.abort(this.reason);
  }
}
