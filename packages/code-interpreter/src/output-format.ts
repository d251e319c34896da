import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContentBlock } from '@quiver/core';
import type { OutputItem } from './kernel.js';

// CSI sequences (colours, cursor moves) and OSC sequences (titles, links).
const ANSI_PATTERN =
  // eslint-disable-next-line no-control-regex
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
// Control characters other than tab and newline (NUL, bell, backspace, lone escapes, DEL).
// eslint-disable-next-line no-control-regex
const CONTROL_PATTERN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/** Remove ANSI escape sequences (IPython colours its tracebacks). */
export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, '');
}

/**
 * Make kernel output safe to show a model: strip ANSI codes and control characters (binary data
 * written to stdout), and keep only what follows the last carriage return on each line, as a
 * terminal would show a progress bar.
 */
export function sanitizeOutput(text: string): string {
  const lines = stripAnsi(text).replace(/\r\n/g, '\n').split('\n');
  return lines
    .map((line) => {
      const index = line.lastIndexOf('\r', line.length - 2);
      return (index >= 0 ? line.slice(index + 1) : line).replace(/\r/g, '');
    })
    .join('\n')
    .replace(CONTROL_PATTERN, '')
    .replace(/\uFFFD{2,}/g, '\uFFFD');
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** Reduce HTML (a pandas table, a rich repr) to readable text: cells tab-separated, rows on lines. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(td|th)>\s*/gi, '\t')
    .replace(/<\/(tr|p|div|h[1-6]|li|table)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, entity: string) => {
      if (entity.startsWith('#x') || entity.startsWith('#X')) {
        return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
      }
      if (entity.startsWith('#')) return String.fromCodePoint(Number.parseInt(entity.slice(1), 10));
      return ENTITIES[entity.toLowerCase()] ?? match;
    })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const IMAGE_TYPES: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg' };

/** Options of {@link OutputCollector}. @internal */
export interface OutputCollectorOptions {
  /** Where images are saved (`outputs/image-<n>.<ext>` under it). */
  workDir: string;
  /** Characters of text kept before the truncation marker. */
  maxChars: number;
  /** Images kept per run; later ones are counted, not saved. */
  maxImages: number;
  /** Put the base64 image bytes in image blocks (besides the saved file). */
  inlineImages: boolean;
  /** Gives the next image number (numbers are unique per session). */
  nextImageNumber: () => number;
  /** Characters of a traceback kept (its end, where the error is). */
  maxTracebackChars?: number;
}

/**
 * Turns kernel outputs into content blocks as they arrive: text merged, capped with a marker,
 * images saved to files. `drain()` hands out what is new, so a stream of drains concatenates to
 * the whole output.
 * @internal
 */
export class OutputCollector {
  readonly savedFiles = new Set<string>();
  truncated = false;
  omittedChars = 0;
  omittedImages = 0;
  #text = '';
  #blocks: ContentBlock[] = [];
  #keptChars = 0;
  #imagesKept = 0;
  #errorText: string | undefined;

  constructor(private readonly options: OutputCollectorOptions) {}

  /** Add one output item. */
  push(item: OutputItem): void {
    switch (item.type) {
      case 'stream':
        this.#appendText(sanitizeOutput(item.text));
        return;
      case 'error': {
        const traceback = sanitizeOutput(item.traceback.join('\n')).trim();
        const limit = this.options.maxTracebackChars ?? 8000;
        const text = traceback || `${item.ename}: ${item.evalue}`;
        this.#errorText = text.length > limit ? `…${text.slice(-limit)}` : text;
        return;
      }
      case 'display':
        this.#pushDisplay(item.data, item.isResult);
        return;
    }
  }

  /** The blocks produced since the last drain. */
  drain(): ContentBlock[] {
    this.#flushText();
    const blocks = this.#blocks;
    this.#blocks = [];
    return blocks;
  }

  /** The traceback of the error the run raised, if any (ANSI stripped). */
  get errorText(): string | undefined {
    return this.#errorText;
  }

  /** Record bytes the kernel layer dropped without parsing (past its own cap). */
  addDroppedBytes(bytes: number): void {
    if (bytes > 0) {
      this.truncated = true;
      this.omittedChars += bytes;
    }
  }

  #pushDisplay(data: Record<string, unknown>, isResult: boolean): void {
    for (const [mimeType, extension] of Object.entries(IMAGE_TYPES)) {
      const encoded = data[mimeType];
      if (typeof encoded !== 'string') continue;
      if (this.#imagesKept >= this.options.maxImages) {
        this.omittedImages += 1;
        this.truncated = true;
        return;
      }
      this.#imagesKept += 1;
      const base64 = encoded.replace(/\s+/g, '');
      const directory = join(this.options.workDir, 'outputs');
      mkdirSync(directory, { recursive: true });
      const path = join(directory, `image-${this.options.nextImageNumber()}.${extension}`);
      writeFileSync(path, Buffer.from(base64, 'base64'));
      this.savedFiles.add(path);
      this.#flushText();
      this.#blocks.push({
        type: 'image',
        mimeType,
        path,
        ...(this.options.inlineImages ? { data: base64 } : {}),
      });
      return;
    }
    const plain = typeof data['text/plain'] === 'string' ? data['text/plain'] : undefined;
    const html = typeof data['text/html'] === 'string' ? data['text/html'] : undefined;
    // pandas and most reprs give text/plain too, which reads better than flattened HTML.
    const text =
      plain !== undefined
        ? sanitizeOutput(plain)
        : html !== undefined
          ? htmlToText(html)
          : undefined;
    if (text === undefined) return;
    // A bare figure repr next to its image says nothing.
    if (!isResult && /^<Figure size .*>$/.test(text.trim())) return;
    this.#appendText(text.endsWith('\n') ? text : `${text}\n`);
  }

  #appendText(text: string): void {
    if (text.length === 0) return;
    const room = this.options.maxChars - this.#keptChars;
    if (room <= 0) {
      this.truncated = true;
      this.omittedChars += text.length;
      return;
    }
    const kept = text.length > room ? text.slice(0, room) : text;
    if (kept.length < text.length) {
      this.truncated = true;
      this.omittedChars += text.length - kept.length;
    }
    this.#keptChars += kept.length;
    this.#text += kept;
  }

  #flushText(): void {
    if (this.#text.length === 0) return;
    this.#blocks.push({ type: 'text', text: this.#text });
    this.#text = '';
  }
}
