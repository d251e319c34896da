import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Toolkit } from '@quiver/core-registry';
import type { DocumentChunk } from '@quiver/core';
import {
  createDocParserTool,
  createSimpleDocParserTool,
  docParserTool,
  simpleDocParserTool,
  QuiverDocumentParser,
} from '../src/index.js';
import { devFile, norm, temporaryDirectory } from './helpers/fixtures.js';

const responseText = (response: { content: { type: string; text?: string }[] }): string =>
  response.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

describe('doc_parser and simple_doc_parser tools', () => {
  it('have zh and en descriptions and JSON Schema parameters', () => {
    expect(docParserTool.name).toBe('doc_parser');
    expect(simpleDocParserTool.name).toBe('simple_doc_parser');
    expect(docParserTool.definition('zh').description).toContain('解析文档');
    expect(docParserTool.definition('en').description).toContain('Parse a document');
    expect(docParserTool.parameters).toMatchObject({ type: 'object', required: ['file'] });
    expect(simpleDocParserTool.flags).toMatchObject({ fileAccess: true, networkAccess: true });
  });

  it('doc_parser returns labelled chunks in the text and structured chunks in metadata', async () => {
    const toolkit = new Toolkit();
    toolkit.register(createDocParserTool({ parseOptions: { cacheDir: false } }));
    const response = await toolkit.callToCompletion({
      id: 'c1',
      name: 'doc_parser',
      arguments: JSON.stringify({
        file: devFile('pdf/federal-register-2020-17221.pdf'),
        maxTokens: 300,
      }),
    });
    expect(response.isError).toBeFalsy();
    const text = responseText(response);
    expect(text).toContain('format: pdf, pages: 15');
    expect(text).toMatch(/\[chunk 1\/\d+ · page 1/);
    const chunks = response.metadata!.chunks as DocumentChunk[];
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks.every((chunk) => chunk.tokenCount <= 300)).toBe(true);
    expect(chunks.at(-1)!.page).toBe(15);
  });

  it('doc_parser stops listing chunks at the output budget and says how many are left', async () => {
    const toolkit = new Toolkit();
    toolkit.register(
      createDocParserTool({ parseOptions: { cacheDir: false }, maxOutputTokens: 1_000 }),
    );
    const response = await toolkit.callToCompletion({
      id: 'c2',
      name: 'doc_parser',
      arguments: JSON.stringify({ file: devFile('html/wikipedia-mozilla.html') }),
    });
    expect(responseText(response)).toMatch(
      /\[\d+ more chunks not shown \(output limit 1000 tokens\)/,
    );
  });

  it('simple_doc_parser returns the plain text, resolving an attached file by name', async () => {
    const toolkit = new Toolkit();
    toolkit.register(createSimpleDocParserTool({ parseOptions: { cacheDir: false } }));
    const directory = temporaryDirectory();
    copyFileSync(devFile('docx/tables.docx'), join(directory, 'tables.docx'));
    const response = await toolkit.callToCompletion(
      { id: 'c3', name: 'simple_doc_parser', arguments: '{"file":"tables.docx"}' },
      { files: [join(directory, 'tables.docx')] },
    );
    expect(response.isError).toBeFalsy();
    expect(norm(responseText(response))).toContain(
      'Above | Top left | Top right | | --- | --- | | Bottom left | Bottom right | Below',
    );
  });

  it('turns parse failures into error responses with the typed error', async () => {
    const toolkit = new Toolkit();
    toolkit.register(createSimpleDocParserTool({ parseOptions: { cacheDir: false } }));
    const response = await toolkit.callToCompletion({
      id: 'c4',
      name: 'simple_doc_parser',
      arguments: JSON.stringify({ file: join(temporaryDirectory(), 'missing.pdf') }),
    });
    expect(response.isError).toBe(true);
    expect(response.metadata?.error).toMatchObject({
      name: 'DocumentParseError',
      code: 'not_found',
    });
  });

  it('refuses paths outside allowedDirectories and URLs when disallowed', async () => {
    const toolkit = new Toolkit();
    const allowed = temporaryDirectory();
    toolkit.register(
      createDocParserTool({
        allowedDirectories: [allowed],
        allowUrls: false,
        parseOptions: { cacheDir: false },
      }),
    );
    const outside = await toolkit.callToCompletion({
      id: 'c5',
      name: 'doc_parser',
      arguments: JSON.stringify({ file: '../../etc/passwd' }),
    });
    expect(outside.isError).toBe(true);
    expect(responseText(outside)).toContain('outside the directories');
    const url = await toolkit.callToCompletion({
      id: 'c6',
      name: 'doc_parser',
      arguments: '{"file":"https://example.com/a.pdf"}',
    });
    expect(url.isError).toBe(true);
    expect(responseText(url)).toContain('URLs are not allowed');
  });

  it('QuiverDocumentParser implements the core DocumentParser contract with defaults', async () => {
    const parser = new QuiverDocumentParser({ cacheDir: false, maxRows: 3 });
    const document = await parser.parse(Buffer.from('a,b\n1,2\n3,4\n5,6\n7,8'), {
      filename: 'x.csv',
    });
    expect(document.metadata.warnings).toEqual(['Showing the first 3 of 5 rows (maxRows).']);
    expect(parser.chunk(document, { maxTokens: 64 })).toHaveLength(1);
  });
});
