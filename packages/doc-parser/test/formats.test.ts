import { describe, expect, it } from '@jest/globals';
import type { DocumentBlock, ParsedDocument } from '@quiver/core';
import { parseDocument } from '../src/index.js';
import { buildPdf } from './helpers/pdf-builder.js';
import { devFile, norm } from './helpers/fixtures.js';
import { buildDocx, buildPptx, buildXlsx, buildZip } from './helpers/zip-builder.js';

const blocksOf = (document: ParsedDocument): DocumentBlock[] =>
  document.pages.flatMap((page) => page.blocks);
const parse = (input: string | Uint8Array, filename?: string) =>
  parseDocument(input, { cacheDir: false, filename });

describe('DOCX', () => {
  it('returns a table as rows of cells between the paragraphs around it', async () => {
    const document = await parse(devFile('docx/tables.docx'));
    const blocks = blocksOf(document);
    expect(blocks.map((block) => block.type)).toEqual(['paragraph', 'table', 'paragraph']);
    const table = blocks[1]!;
    expect(table.type === 'table' && table.rows).toEqual([
      ['Top left', 'Top right'],
      ['Bottom left', 'Bottom right'],
    ]);
  });

  it('tells bulleted from numbered lists, reads text boxes and footnotes', async () => {
    const document = await parse(devFile('docx/testWORD_various.docx'));
    const lists = blocksOf(document).filter((block) => block.type === 'list');
    expect(
      lists.map((list) => list.type === 'list' && [list.items, list.ordered ?? false]),
    ).toEqual([
      [['Bullet 1', 'Bullet 2', 'Bullet 3'], false],
      [['Number bullet 1', 'Number bullet 2', 'Number bullet 3'], true],
    ]);
    expect(document.text).toContain('Here is a text box');
    expect(document.text).toContain('This is a footnote.');
    expect(document.metadata.author).toBe('Michael McCandless');
  });

  it('takes headings from paragraph styles and gives blocks their heading path', async () => {
    const styles = `<?xml version="1.0"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
      <w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>
      <w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style>
      <w:style w:type="paragraph" w:styleId="MyHeading"><w:name w:val="My Heading"/><w:basedOn w:val="Heading2"/></w:style></w:styles>`;
    const paragraph = (text: string, style?: string) =>
      `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t>${text}</w:t></w:r></w:p>`;
    const bytes = buildDocx(
      [
        paragraph('Annual report', 'Heading1'),
        paragraph('Intro text.'),
        paragraph('Revenue', 'Heading2'),
        paragraph('Revenue grew.'),
        paragraph('Costs', 'MyHeading'),
        paragraph('Costs fell.'),
        `<w:p><w:r><w:t>Before break</w:t></w:r><w:r><w:br w:type="page"/></w:r></w:p>`,
        paragraph('On page two.'),
      ].join(''),
      [{ name: 'word/styles.xml', data: styles }],
    );
    const document = await parse(bytes, 'report.docx');
    expect(document.title).toBe('Annual report');
    const blocks = blocksOf(document);
    const byText = (text: string) => blocks.find((block) => block.text === text)!;
    expect(byText('Revenue')).toMatchObject({
      type: 'heading',
      level: 2,
      headingPath: ['Annual report'],
    });
    expect(byText('Costs')).toMatchObject({
      type: 'heading',
      level: 2,
      headingPath: ['Annual report'],
    });
    expect(byText('Costs fell.').headingPath).toEqual(['Annual report', 'Costs']);
    expect(byText('On page two.').page).toBe(2);
    expect(byText('Before break').page).toBe(1);
  });
});

describe('PPTX', () => {
  const deck = buildPptx([
    {
      title: 'Quarterly review',
      frames: [
        {
          x: 0,
          y: 200000,
          paragraphs: [
            { text: 'Agenda:' },
            { text: 'Sales', bullet: 'number' },
            { text: 'Hiring', bullet: 'number' },
          ],
        },
        { x: 0, y: 600000, paragraphs: [{ text: 'Closing remarks' }] },
      ],
      table: [
        ['Region', 'Revenue'],
        ['EMEA', '12'],
      ],
      notes: 'Mention the new office in Lyon.',
    },
    {
      title: 'Second slide',
      frames: [{ x: 0, y: 100000, paragraphs: [{ text: 'More', bullet: 'char' }] }],
    },
  ]);

  it('puts slide titles first, frames in position order, tables as rows and speaker notes on their slide', async () => {
    const document = await parse(deck, 'deck.pptx');
    expect(document.format).toBe('pptx');
    expect(document.pages.map((page) => page.page)).toEqual([1, 2]);
    const slide1 = document.pages[0]!.blocks;
    expect(slide1.map((block) => block.type)).toEqual([
      'heading',
      'paragraph',
      'list',
      'paragraph',
      'table',
      'paragraph',
    ]);
    expect(slide1[0]).toMatchObject({ type: 'heading', text: 'Quarterly review', level: 1 });
    expect(slide1[2]).toMatchObject({ type: 'list', items: ['Sales', 'Hiring'], ordered: true });
    expect(slide1[4]).toMatchObject({
      type: 'table',
      rows: [
        ['Region', 'Revenue'],
        ['EMEA', '12'],
      ],
    });
    expect(slide1[5]!.text).toBe('Speaker notes: Mention the new office in Lyon.');
    expect(slide1[5]!.headingPath).toEqual(['Quarterly review']);
    expect(document.pages[1]!.blocks[1]).toMatchObject({
      type: 'list',
      items: ['More'],
      headingPath: ['Second slide'],
    });
    expect(document.metadata.slidesWithNotes).toBe(1);
    expect(document.title).toBe('Quarterly review');
  });

  it('reads the table of the real Tika deck row by row', async () => {
    const document = await parse(devFile('pptx/testPPT_various.pptx'));
    const table = blocksOf(document).find((block) => block.type === 'table');
    expect(table?.type === 'table' && table.rows[0]).toEqual([
      'Row 1 Col 1',
      'Row 1 Col 2',
      'Row 1 Col 3',
    ]);
  });
});

describe('XLSX and CSV', () => {
  it('gives each sheet a page, its name as heading and cached formula values in the table', async () => {
    const document = await parse(devFile('xlsx/testEXCEL.xlsx'));
    expect(document.pages).toHaveLength(3);
    expect(document.metadata.sheets).toEqual(['Feuil1', 'Feuil2', 'Feuil3']);
    const table = document.pages[0]!.blocks.find((block) => block.type === 'table');
    expect(table?.type).toBe('table');
    const rows = table!.type === 'table' ? table!.rows : [];
    expect(rows.some((row) => row.includes('Number') && row.includes('Square'))).toBe(true);
    expect(rows.some((row) => row.includes('15') && row.includes('225'))).toBe(true);
    expect(table!.headingPath).toEqual(['Feuil1']);
  });

  it('caps rows per sheet, keeps the header row and says so', async () => {
    const rows: (string | number)[][] = [['id', 'name']];
    for (let index = 1; index <= 50; index += 1) rows.push([index, `item ${index}`]);
    const document = await parseDocument(buildXlsx([{ name: 'Data', rows }]), {
      cacheDir: false,
      maxRows: 10,
    });
    const table = blocksOf(document).find((block) => block.type === 'table');
    expect(table?.type === 'table' && table.rows).toHaveLength(10);
    expect(table?.type === 'table' && table.rows[0]).toEqual(['id', 'name']);
    expect(document.metadata.warnings).toEqual([
      'Sheet "Data": showing the first 10 of 51 rows (maxRows).',
    ]);
    expect(document.text).toContain('showing the first 10 of 51 rows');
  });

  it('shows date-formatted cells as ISO dates (built-in and custom formats)', async () => {
    const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
    const bytes = buildZip([
      {
        name: 'xl/workbook.xml',
        data: `<workbook ${ns} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Log" sheetId="1" r:id="rId1"/></sheets></workbook>`,
      },
      {
        name: 'xl/_rels/workbook.xml.rels',
        data: '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
      },
      {
        name: 'xl/styles.xml',
        data: `<styleSheet ${ns}><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd\\ hh:mm"/></numFmts><cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="164"/></cellXfs></styleSheet>`,
      },
      {
        name: 'xl/worksheets/sheet1.xml',
        data: `<worksheet ${ns}><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>when</t></is></c><c r="B1" t="inlineStr"><is><t>count</t></is></c></row><row r="2"><c r="A2" s="1"><v>45292</v></c><c r="B2" s="0"><v>45292</v></c></row><row r="3"><c r="A3" s="2"><v>45292.5</v></c><c r="B3"><v>7</v></c></row></sheetData></worksheet>`,
      },
    ]);
    const document = await parse(bytes, 'log.xlsx');
    const table = blocksOf(document).find((block) => block.type === 'table');
    expect(table?.type === 'table' && table.rows).toEqual([
      ['when', 'count'],
      ['2024-01-01', '45292'],
      ['2024-01-01 12:00:00', '7'],
    ]);
  });

  it('parses CSV with quotes, embedded newlines and a sniffed semicolon delimiter', async () => {
    const csv =
      'name;city;note\n"Smith; J.";Paris;"line one\nline two"\nLee;"Rome";"said ""hi"""\n';
    const document = await parse(Buffer.from(csv), 'people.csv');
    expect(document.format).toBe('csv');
    const table = blocksOf(document)[0]!;
    expect(table.type === 'table' && table.rows).toEqual([
      ['name', 'city', 'note'],
      ['Smith; J.', 'Paris', 'line one\nline two'],
      ['Lee', 'Rome', 'said "hi"'],
    ]);
  });

  it('caps CSV rows with a note', async () => {
    const csv = ['a,b', ...Array.from({ length: 30 }, (_, index) => `${index},x`)].join('\n');
    const document = await parseDocument(Buffer.from(csv), {
      cacheDir: false,
      filename: 'big.csv',
      maxRows: 5,
    });
    expect(document.metadata.warnings).toEqual(['Showing the first 5 of 31 rows (maxRows).']);
  });
});

describe('HTML', () => {
  it('keeps the article, drops navigation, scripts and MediaWiki chrome, keeps title and tables', async () => {
    const document = await parse(devFile('html/wikipedia-mozilla.html'));
    expect(document.title).toBe('Mozilla - Wikipedia');
    expect(document.text).not.toContain('Jump to navigation');
    expect(document.text).not.toMatch(/\[edit\]/);
    expect(document.text).not.toContain('window.RLQ');
    const headings = blocksOf(document)
      .filter((block) => block.type === 'heading')
      .map((block) => block.text);
    expect(headings).toContain('Eich CEO promotion controversy');
    expect(blocksOf(document).some((block) => block.type === 'table')).toBe(true);
  });

  it('extracts main content, canonical URL, lists, code and image alt text from a page with chrome', async () => {
    const html = `<!doctype html><html lang="en"><head><title>Guide | Example</title>
      <link rel="canonical" href="https://example.com/guide"><style>body{color:red}</style><script>var tracking = 1;</script></head>
      <body><nav><a href="/">Home</a><a href="/blog">Blog</a></nav>
      <div class="cookie-banner">We use cookies. <a href="/privacy">Accept</a></div>
      <main><h1>Install guide</h1><p>First, install the <b>package</b> with npm.</p>
      <pre><code class="language-sh">npm install quiver</code></pre>
      <h2>Options</h2><ul><li>fast</li><li>safe</li></ul><img src="/chart.png" alt="Throughput chart">
      <table><tr><th>Name</th><th>Default</th></tr><tr><td>timeout</td><td>60s</td></tr></table></main>
      <footer>© Example Corp</footer></body></html>`;
    const document = await parse(Buffer.from(html), 'guide.html');
    expect(document.format).toBe('html');
    expect(document.title).toBe('Guide | Example');
    expect(document.metadata.canonicalUrl).toBe('https://example.com/guide');
    const blocks = blocksOf(document);
    expect(blocks.map((block) => block.type)).toEqual([
      'heading',
      'paragraph',
      'code',
      'heading',
      'list',
      'image',
      'table',
    ]);
    expect(blocks[2]).toMatchObject({ type: 'code', language: 'sh', text: 'npm install quiver' });
    expect(blocks[4]).toMatchObject({
      type: 'list',
      items: ['fast', 'safe'],
      headingPath: ['Install guide', 'Options'],
    });
    expect(blocks[5]).toMatchObject({ type: 'image', alt: 'Throughput chart', src: '/chart.png' });
    expect(blocks[6]).toMatchObject({
      type: 'table',
      rows: [
        ['Name', 'Default'],
        ['timeout', '60s'],
      ],
    });
    for (const absent of ['Home', 'cookies', 'tracking', 'color:red', 'Example Corp'])
      expect(document.text).not.toContain(absent);
  });
});

describe('Markdown', () => {
  it('parses headings, fenced code, lists, tables and inline markup', async () => {
    const markdown = [
      '# Readme',
      '',
      'Some **bold** and [a link](https://example.com) and `code`.',
      '',
      '## Usage',
      '',
      '```js',
      'const x = 1;',
      '',
      '# not a heading',
      '```',
      '',
      '1. first',
      '2. second',
      '   continued',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
      '',
      'Setext',
      '------',
      '',
      '- item',
    ].join('\n');
    const document = await parse(Buffer.from(markdown), 'README.md');
    expect(document.format).toBe('markdown');
    expect(document.title).toBe('Readme');
    const blocks = blocksOf(document);
    expect(blocks.map((block) => block.type)).toEqual([
      'heading',
      'paragraph',
      'heading',
      'code',
      'list',
      'table',
      'heading',
      'list',
    ]);
    expect(blocks[1]!.text).toBe('Some bold and a link and code.');
    expect(blocks[3]).toMatchObject({
      type: 'code',
      language: 'js',
      text: 'const x = 1;\n\n# not a heading',
    });
    expect(blocks[4]).toMatchObject({
      items: ['first', 'second\ncontinued'],
      ordered: true,
      headingPath: ['Readme', 'Usage'],
    });
    expect(blocks[5]).toMatchObject({
      rows: [
        ['a', 'b'],
        ['1', '2'],
      ],
    });
    expect(blocks[7]!.headingPath).toEqual(['Readme', 'Setext']);
  });

  it('detects Markdown from content when the name says nothing', async () => {
    const document = await parse(devFile('md/readability-README.md'));
    expect(document.format).toBe('markdown');
    expect(
      blocksOf(document).some(
        (block) => block.type === 'code' && block.text.includes('npm install @mozilla/readability'),
      ),
    ).toBe(true);
  });
});

describe('text encodings and JSON', () => {
  const chinese = '第一章 总则\n\n本办法适用于所有员工。';

  it('decodes UTF-16 LE and BE with a BOM', async () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(chinese, 'utf16le')]);
    const be = Buffer.from(le);
    be.swap16();
    be[0] = 0xfe;
    be[1] = 0xff;
    for (const [bytes, encoding] of [
      [le, 'utf-16le'],
      [be, 'utf-16be'],
    ] as const) {
      const document = await parse(bytes, 'notes.txt');
      expect(document.text).toBe(chinese);
      expect(document.metadata.encoding).toBe(encoding);
    }
  });

  it('detects and decodes GBK/GB18030 Chinese text', async () => {
    // GBK bytes of the text (Python's codec), written out so the test does not rely on our own decoder's inverse.
    const encoded = Buffer.from(
      'b5dad2bbd5c220d7dcd4f20a0ab1beb0ecb7a8cacad3c3d3dacbf9d3d0d4b1b9a4a1a3',
      'hex',
    );
    const document = await parse(encoded, 'policy.txt');
    expect(document.metadata.encoding).toBe('gb18030');
    expect(document.text).toBe(chinese);
    expect(document.pages[0]!.blocks).toHaveLength(2);
  });

  it('keeps UTF-8 text cut inside its last character, without mojibake', async () => {
    const bytes = Buffer.from('Résumé of the café 咖啡');
    const document = await parse(bytes.subarray(0, bytes.length - 1), 'cut.txt');
    expect(document.metadata.encoding).toBe('utf-8');
    expect(document.text).toBe('Résumé of the café 咖');
  });

  it('honours a declared legacy charset (Shift_JIS in <meta>) when the bytes are not UTF-8', async () => {
    // "日本語のページ" in Shift_JIS (Python's codec).
    const body = Buffer.from('93fa967b8cea82cc8379815b8357', 'hex');
    const html = Buffer.concat([
      Buffer.from(
        '<!DOCTYPE html><html><head><meta charset="shift_jis"><title>t</title></head><body><p>',
      ),
      body,
      Buffer.from('</p></body></html>'),
    ]);
    const document = await parse(html, 'page.html');
    expect(document.metadata.encoding).toBe('shift_jis');
    expect(document.text).toContain('日本語のページ');
  });

  it('parses JSON into a code block and takes its title', async () => {
    const document = await parse(Buffer.from('{"title":"Config","items":[1,2]}'), 'config.json');
    expect(document.format).toBe('json');
    expect(document.title).toBe('Config');
    expect(blocksOf(document)[0]).toMatchObject({ type: 'code', language: 'json' });
    expect(JSON.parse(document.pages[0]!.blocks[0]!.text)).toEqual({
      title: 'Config',
      items: [1, 2],
    });
  });

  it('splits plain text into pages at form feeds', async () => {
    const document = await parse(Buffer.from('page one\fpage two'), 'a.txt');
    expect(document.pages.map((page) => page.blocks[0]!.text)).toEqual(['page one', 'page two']);
  });
});

describe('PDF', () => {
  it('reports scanned pages of a mixed PDF and keeps the text of the others', async () => {
    const pdf = buildPdf([
      { lines: [{ x: 72, y: 700, size: 12, text: 'A typed page about budgets.' }] },
      { image: true },
    ]);
    const document = await parse(pdf, 'mixed.pdf');
    expect(document.metadata.scannedPages).toEqual([2]);
    expect(document.metadata.warnings).toEqual([
      expect.stringContaining('Page 2 is a scanned image'),
    ]);
    expect(document.pages[1]!.blocks[0]).toMatchObject({ type: 'image', page: 2 });
    expect(document.text).toContain('A typed page about budgets.');
  });

  it('reports a page whose content stream is damaged instead of passing off what pdf.js recovered', async () => {
    const pdf = buildPdf([
      { lines: [{ x: 72, y: 700, size: 12, text: 'Intact first page.' }] },
      { damaged: true },
    ]);
    const document = await parse(pdf, 'damaged.pdf');
    expect(document.metadata.damagedPages).toEqual([2]);
    expect(document.metadata.warnings).toEqual([
      expect.stringContaining('Page 2 could not be decoded'),
    ]);
    expect(norm(document.text)).toBe('Intact first page.');
    const allDamaged = await parseDocument(buildPdf([{ damaged: true }]), {
      cacheDir: false,
    }).catch((error: unknown) => error);
    expect(allDamaged).toMatchObject({ code: 'corrupted' });
  });

  it('opens an encrypted PDF with its password', async () => {
    const pdf = buildPdf(
      [{ lines: [{ x: 72, y: 700, size: 12, text: 'Confidential salary table' }] }],
      { userPassword: 'secret' },
    );
    const document = await parseDocument(pdf, { cacheDir: false, password: 'secret' });
    expect(norm(document.text)).toBe('Confidential salary table');
  });

  it('reads a two-column page column by column even when the stream interleaves the columns', async () => {
    const left = ['The left column starts', 'and continues here', 'to its very end.'];
    const right = ['The right column begins', 'after the left one', 'and finishes last.'];
    const lines = left.flatMap((text, index) => [
      { x: 72, y: 700 - index * 14, size: 11, text },
      { x: 320, y: 700 - index * 14, size: 11, text: right[index]! },
    ]);
    lines.push(
      { x: 72, y: 640, size: 11, text: 'Left again after a gap' },
      { x: 320, y: 640, size: 11, text: 'Right again after a gap' },
    );
    const document = await parse(buildPdf([{ lines }]), 'columns.pdf');
    const text = norm(document.text);
    expect(text).toContain('The left column starts and continues here to its very end.');
    expect(text).toContain('The right column begins after the left one and finishes last.');
    expect(text.indexOf('Left again')).toBeLessThan(text.indexOf('The right column'));
  });

  it('finds headings by font size, with levels', async () => {
    const pdf = buildPdf([
      {
        lines: [
          { x: 72, y: 720, size: 24, text: 'Safety Manual' },
          { x: 72, y: 690, size: 16, text: 'Chapter 1 Scope' },
          { x: 72, y: 670, size: 10, text: 'This manual covers every site we operate.' },
          { x: 72, y: 640, size: 16, text: 'Chapter 2 Duties' },
          { x: 72, y: 620, size: 10, text: 'Every worker wears a helmet on site.' },
        ],
      },
    ]);
    const document = await parse(pdf, 'manual.pdf');
    const blocks = blocksOf(document);
    expect(
      blocks
        .filter((block) => block.type === 'heading')
        .map((block) => [block.text, block.type === 'heading' && block.level]),
    ).toEqual([
      ['Safety Manual', 1],
      ['Chapter 1 Scope', 2],
      ['Chapter 2 Duties', 2],
    ]);
    expect(blocks.find((block) => block.text.startsWith('Every worker'))!.headingPath).toEqual([
      'Safety Manual',
      'Chapter 2 Duties',
    ]);
  });

  it('leaves the built-ins that pdf.js bundles polyfills for native (no process-wide slowdown)', async () => {
    await parse(devFile('pdf/jo.pdf'));
    const isNative = (value: unknown): boolean =>
      Function.prototype.toString.call(value).includes('[native code]');
    expect(isNative(Array.prototype.push)).toBe(true);
    expect(isNative(structuredClone)).toBe(true);
  });

  it('decodes CJK text through the bundled CMaps, keeping vertical lines in right-to-left order', async () => {
    const document = await parse(devFile('pdf/jo.pdf'));
    expect(document.text).toContain('わたくしといふ現象は');
    const text = norm(document.text);
    expect(text.indexOf('わたくしといふ現象は')).toBeLessThan(
      text.indexOf('假定された有機交流電燈の'),
    );
    expect(text.indexOf('假定された有機交流電燈の')).toBeLessThan(
      text.indexOf('けれどもこれら新世代沖積世の'),
    );
  });
});

describe('format detection', () => {
  it('parses content, not the extension, and warns about the mismatch', async () => {
    const pdf = buildPdf([{ lines: [{ x: 72, y: 700, size: 12, text: 'Actually a PDF' }] }]);
    const document = await parse(pdf, 'letter.docx');
    expect(document.format).toBe('pdf');
    expect(document.metadata.warnings).toEqual([
      expect.stringContaining('says .docx but the content is PDF'),
    ]);
  });

  it('recognises a DOCX with no extension and an HTML file named .txt', async () => {
    expect((await parse(devFile('docx/tables.docx').replace(/$/, ''), undefined)).format).toBe(
      'docx',
    );
    const bytes = buildZip([
      {
        name: 'word/document.xml',
        data: '<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>hi</w:t></w:r></w:p></w:body></w:document>',
      },
    ]);
    expect((await parse(bytes)).format).toBe('docx');
    expect(
      (
        await parse(
          Buffer.from('<!DOCTYPE html><html><body><p>Hello there</p></body></html>'),
          'page.txt',
        )
      ).format,
    ).toBe('html');
  });
});
