import { createHash } from 'node:crypto';
import type { DocumentBlock, DocumentChunk, ParsedDocument } from '@quiver/core';
import { ConfigurationError } from '@quiver/core';
import { blockText } from './document-builder.js';
import { countTokens, splitByTokens } from './tokenizer.js';

/** Options of {@link chunkDocument}. */
export interface ChunkDocumentOptions {
  /** Upper bound of every chunk, in o200k tokens. Default 512. */
  maxTokens?: number;
  /** Tokens of trailing context (whole sentences, list items or table rows) repeated at the start of the next chunk of the same section. Default 64; must be below `maxTokens`. */
  overlap?: number;
  /** `source` of each chunk. Default: `doc.source`, else `doc.title`. */
  source?: string;
}

/** One indivisible piece of text: a whole block, a sentence, a list item, a table row, a code line. */
interface Unit {
  text: string;
  tokens: number;
  page: number;
  headingPath: string[];
  /** Separator placed before this unit when it follows another one in a chunk. */
  joiner: string;
  isHeading: boolean;
  /** Block this unit belongs to (overlap never reaches into an earlier section). */
  block: number;
  /** For table rows after the first: the header lines to repeat when a chunk starts here. */
  tableHeader?: string;
}

/**
 * Split a parsed document into token-bounded chunks for retrieval.
 *
 * Blocks are packed in order. A heading starts a new chunk once the current one has some
 * content, so chunks follow sections. A block that does not fit is split at sentence
 * boundaries (paragraphs), items (lists), rows (tables: the header row is repeated in each
 * continuation chunk) or lines (code); only a single sentence longer than `maxTokens` is cut
 * inside. Every chunk has at most `maxTokens` tokens, carries the page it starts on and the
 * heading path of its first block, and an `id` stable for the same content.
 *
 * @param doc - A document from {@link parseDocument}.
 * @param options - `maxTokens` (default 512), `overlap` (default 64), `source`.
 * @returns The chunks, `index` 0…n-1.
 * @throws {ConfigurationError} When `maxTokens` < 16 or `overlap` ≥ `maxTokens`.
 * @example
 * ```ts
 * const doc = await parseDocument('handbook.pdf');
 * for (const chunk of chunkDocument(doc, { maxTokens: 400, overlap: 40 })) {
 *   console.log(chunk.page, chunk.headingPath.join(' > '), chunk.tokenCount);
 * }
 * ```
 */
export function chunkDocument(
  doc: ParsedDocument,
  options: ChunkDocumentOptions = {},
): DocumentChunk[] {
  const maxTokens = options.maxTokens ?? 512;
  const overlap = options.overlap ?? Math.min(64, Math.floor(maxTokens / 8));
  if (!Number.isInteger(maxTokens) || maxTokens < 16) {
    throw new ConfigurationError(
      `chunkDocument: maxTokens must be an integer ≥ 16, got ${maxTokens}.`,
    );
  }
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= maxTokens) {
    throw new ConfigurationError(
      `chunkDocument: overlap must be an integer from 0 to maxTokens - 1, got ${overlap}.`,
    );
  }
  const source = options.source ?? doc.source ?? doc.title;
  const idPrefix = createHash('sha256')
    .update(typeof doc.metadata.contentHash === 'string' ? doc.metadata.contentHash : doc.text)
    .update(`\0${source}\0${maxTokens}\0${overlap}`)
    .digest('hex')
    .slice(0, 16);

  const chunks: DocumentChunk[] = [];
  let current: Unit[] = [];
  let currentTokens = 0;

  const emit = (): void => {
    const content = current.filter((unit) => unit.text.length > 0);
    if (content.length === 0) {
      current = [];
      currentTokens = 0;
      return;
    }
    const text = joinUnits(content);
    const first = content[0]!;
    chunks.push({
      id: `${idPrefix}-${chunks.length}`,
      index: chunks.length,
      text,
      source,
      page: first.page,
      headingPath: first.isHeading
        ? [...first.headingPath, first.text.replace(/^#+\s*/, '')]
        : first.headingPath,
      tokenCount: countTokens(text),
    });
    current = [];
    currentTokens = 0;
  };

  /** Close the current chunk and start the next one with a tail of it (same block only) as overlap. */
  const rollOver = (next: Unit): void => {
    const previous = current;
    emit();
    if (overlap === 0) return;
    const tail: Unit[] = [];
    let tailTokens = 0;
    for (let index = previous.length - 1; index >= 0; index -= 1) {
      const unit = previous[index]!;
      if (unit.block !== next.block || unit.isHeading) break;
      if (tailTokens + unit.tokens > overlap) break;
      tail.unshift(unit);
      tailTokens += unit.tokens + 1;
    }
    for (const unit of tail) push(unit);
  };

  const cost = (unit: Unit): number => {
    let tokens = unit.tokens + (current.length > 0 ? 1 : 0);
    if (current.length === 0 && unit.tableHeader) tokens += countTokens(unit.tableHeader) + 1;
    return tokens;
  };

  const push = (unit: Unit): void => {
    if (current.length === 0 && unit.tableHeader) {
      const header: Unit = {
        ...unit,
        text: unit.tableHeader,
        tokens: countTokens(unit.tableHeader),
        tableHeader: undefined,
      };
      current.push(header);
      currentTokens += header.tokens;
    }
    currentTokens += cost(unit);
    current.push(unit);
  };

  const blocks = doc.pages.flatMap((page) => page.blocks);
  blocks.forEach((block, blockIndex) => {
    const whole = blockUnit(block, blockIndex);
    if (whole.text.length === 0) return;
    const hasContent = current.some((unit) => !unit.isHeading);
    if (whole.isHeading && hasContent) emit();
    if (cost(whole) <= maxTokens - currentTokens) {
      push(whole);
      return;
    }
    // Does not fit: move it whole to a fresh chunk when it fits one and the current chunk is half full.
    if (whole.tokens <= maxTokens && currentTokens >= maxTokens / 2) {
      emit();
      push(whole);
      return;
    }
    for (const unit of splitBlock(block, blockIndex, maxTokens)) {
      if (cost(unit) > maxTokens - currentTokens && current.length > 0) rollOver(unit);
      // The overlap itself may leave too little room: drop it rather than exceed the bound.
      if (cost(unit) > maxTokens - currentTokens) {
        current = [];
        currentTokens = 0;
      }
      push(unit);
    }
  });
  emit();
  return enforceBound(chunks, maxTokens);
}

function blockUnit(block: DocumentBlock, blockIndex: number): Unit {
  const text = blockText(block);
  return {
    text,
    tokens: countTokens(text),
    page: block.page,
    headingPath: block.headingPath,
    joiner: '\n\n',
    isHeading: block.type === 'heading',
    block: blockIndex,
  };
}

const sentenceSegmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

/** Break a block into its smallest natural units (never mid-sentence unless one sentence is over the bound). */
function splitBlock(block: DocumentBlock, blockIndex: number, maxTokens: number): Unit[] {
  const base = {
    page: block.page,
    headingPath: block.headingPath,
    isHeading: false,
    block: blockIndex,
  };
  const units: Unit[] = [];
  const add = (text: string, joiner: string, extra?: Partial<Unit>): void => {
    const tokens = countTokens(text);
    if (tokens <= maxTokens - 8) {
      units.push({ ...base, text, tokens, joiner, ...extra });
      return;
    }
    splitByTokens(text, maxTokens - 8).forEach((piece, index) =>
      units.push({
        ...base,
        text: piece,
        tokens: countTokens(piece),
        joiner: index === 0 ? joiner : '',
        ...extra,
      }),
    );
  };
  switch (block.type) {
    case 'table': {
      const lines = block.text.split('\n');
      const header = lines.slice(0, 2).join('\n');
      add(lines.slice(0, 3).join('\n'), '\n\n');
      for (const line of lines.slice(3)) add(line, '\n', { tableHeader: header });
      break;
    }
    case 'list':
    case 'code': {
      const lines = blockText(block).split('\n');
      lines.forEach((line, index) => add(line, index === 0 ? '\n\n' : '\n'));
      break;
    }
    default: {
      const paragraphs = blockText(block).split(/\n+/);
      paragraphs.forEach((paragraph, paragraphIndex) => {
        let first = true;
        for (const { segment } of sentenceSegmenter.segment(paragraph)) {
          const sentence = segment.trim();
          if (!sentence) continue;
          add(sentence, first ? (paragraphIndex === 0 ? '\n\n' : '\n') : ' ');
          first = false;
        }
      });
    }
  }
  return units;
}

function joinUnits(units: Unit[]): string {
  return units.map((unit, index) => (index === 0 ? unit.text : unit.joiner + unit.text)).join('');
}

/** Token counts of separate pieces can differ by a token or two from the joined text: re-check and split if needed. */
function enforceBound(chunks: DocumentChunk[], maxTokens: number): DocumentChunk[] {
  if (chunks.every((chunk) => chunk.tokenCount <= maxTokens)) return chunks;
  const fixed: DocumentChunk[] = [];
  for (const chunk of chunks) {
    if (chunk.tokenCount <= maxTokens) {
      fixed.push(chunk);
      continue;
    }
    const cut = chunk.text.lastIndexOf('\n', Math.floor(chunk.text.length * 0.9));
    const parts =
      cut > 0
        ? [chunk.text.slice(0, cut), chunk.text.slice(cut + 1)]
        : splitByTokens(chunk.text, maxTokens);
    for (const text of parts) fixed.push({ ...chunk, text, tokenCount: countTokens(text) });
  }
  const idPrefix = chunks[0]!.id.replace(/-\d+$/, '');
  return enforceBound(
    fixed.map((chunk, index) => ({ ...chunk, index, id: `${idPrefix}-${index}` })),
    maxTokens,
  );
}
