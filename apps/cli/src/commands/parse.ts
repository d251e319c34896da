import type { Command } from 'commander';
import { DocumentParseError, parseDocument } from '@quiver/doc-parser';
import type { ParsedDocument } from '@quiver/core';
import { ExitCode, styles } from '../io.js';
import type { CommandEnvironment } from './tools.js';

/** A one-paragraph summary of a parsed document: format, pages, blocks by type, tokens. */
export function describeDocument(document: ParsedDocument): string {
  const counts = new Map<string, number>();
  for (const page of document.pages)
    for (const block of page.blocks) counts.set(block.type, (counts.get(block.type) ?? 0) + 1);
  const blocks = [...counts].map(([type, count]) => `${count} ${type}`).join(', ');
  return `"${document.title}" — ${document.format}, ${document.pages.length} page(s), ${blocks || 'no blocks'}, ${document.tokenCount} tokens`;
}

/** `quiver parse <file>`: parse a document (PDF, Word, PowerPoint, Excel, HTML, Markdown, text). */
export function registerParseCommand(program: Command, environment: CommandEnvironment): void {
  program
    .command('parse')
    .description(
      'Parse a document into text and structure (pdf, docx, pptx, xlsx, html, md, txt, or a URL)',
    )
    .argument('<file>', 'path or http(s) URL')
    .option('--json', 'print the parsed document (pages, blocks, metadata) as JSON')
    .option('--summary', 'print only the summary line, not the text')
    .action(async (file: string, options: { json?: boolean; summary?: boolean }) => {
      const { io } = environment;
      let document: ParsedDocument;
      try {
        document = await parseDocument(file);
      } catch (error) {
        if (error instanceof DocumentParseError) {
          io.stderr(`quiver: ${error.message}\n`);
          environment.setExitCode(ExitCode.failure);
          return;
        }
        throw error;
      }
      if (options.json) {
        io.stdout(`${JSON.stringify(document, null, 2)}\n`);
        return;
      }
      const summary = `${styles(io).bold(describeDocument(document))}\n`;
      if (options.summary) io.stdout(summary);
      else {
        io.stderr(summary);
        io.stdout(`${document.text}\n`);
      }
    });
}
