import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { DocumentParseError, parseDocument, type ParseDocumentOptions } from '../src/index.js';
import { devBytes, devFile, temporaryDirectory } from './helpers/fixtures.js';
import { buildPdf } from './helpers/pdf-builder.js';
import { buildDocx, buildZip } from './helpers/zip-builder.js';

/** Parse and return the typed error (failing the test if the parse succeeds or throws anything else). */
async function parseError(
  input: string | Uint8Array,
  options: ParseDocumentOptions = {},
): Promise<DocumentParseError> {
  try {
    await parseDocument(input, { cacheDir: false, ...options });
  } catch (error) {
    expect(error).toBeInstanceOf(DocumentParseError);
    return error as DocumentParseError;
  }
  throw new Error('expected the parse to fail');
}

/** Overwrite `count` bytes in the middle third of `bytes` with a fixed pattern. */
function damage(bytes: Buffer, at = 0.5, count = 64): Buffer {
  const copy = Buffer.from(bytes);
  const start = Math.floor(copy.length * at);
  for (let index = 0; index < count && start + index < copy.length; index += 1)
    copy[start + index] = (index * 37 + 11) & 255;
  return copy;
}

describe('truncated files of every format', () => {
  it.each([
    ['pdf/federal-register-2020-17221.pdf', 'pdf'],
    ['pdf/jo.pdf', 'pdf'],
    ['docx/testWORD_various.docx', 'docx'],
    ['pptx/testPPT_various.pptx', 'pptx'],
    ['xlsx/testEXCEL.xlsx', 'xlsx'],
  ])('%s cut in half is "corrupted" and names the file', async (file, extension) => {
    const bytes = devBytes(file);
    const error = await parseError(bytes.subarray(0, Math.floor(bytes.length / 2)), {
      filename: `cut.${extension}`,
    });
    expect(error.code).toBe('corrupted');
    expect(error.message).toContain('cut.');
    expect(error.message).toMatch(/truncated|damaged|re-export|re-download/i);
  });

  it('a JSON file cut short is "corrupted"', async () => {
    const error = await parseError(Buffer.from('{"name": "report", "items": [1, 2'), {
      filename: 'data.json',
    });
    expect(error.code).toBe('corrupted');
    expect(error.format).toBe('json');
  });

  it('a CSV file cut inside a quoted field is "corrupted"', async () => {
    const error = await parseError(Buffer.from('a,b\n1,"unfinished'), { filename: 'data.csv' });
    expect(error.code).toBe('corrupted');
  });

  it('an HTML or Markdown file cut short still parses what is there (text formats have no end marker)', async () => {
    const html = devBytes('html/keep-tabular-data.html');
    const document = await parseDocument(html.subarray(0, Math.floor(html.length / 3)), {
      cacheDir: false,
      filename: 'page.html',
    });
    expect(document.text).toContain('This week was the time to close and finish all the things');
  });
});

describe('corrupted files of every format', () => {
  it('a PDF with a damaged body is "corrupted", not empty text', async () => {
    const pdf = buildPdf([{ lines: [{ x: 72, y: 700, size: 12, text: 'Hello' }] }]);
    const text = pdf.toString('latin1');
    // Destroy the catalog and page tree: nothing readable remains, though %PDF and %%EOF are intact.
    const broken = Buffer.from(
      text
        .replace(/<< \/Type \/Catalog[^\n]*/, 'xx garbage xx')
        .replace(/<< \/Type \/Pages[^\n]*/, 'garbage'),
      'latin1',
    );
    const error = await parseError(broken, { filename: 'broken.pdf' });
    expect(error.code).toBe('corrupted');
  });

  it.each([
    ['docx/testWORD_various.docx', 'docx'],
    ['pptx/testPPT_various.pptx', 'pptx'],
    ['xlsx/testEXCEL.xlsx', 'xlsx'],
  ])(
    '%s with damaged compressed data is "corrupted" (checksum or inflate error)',
    async (file, extension) => {
      const bytes = devBytes(file);
      // The main part's data sits early in the archive; damage the first 40 % in several places.
      let broken = bytes;
      for (const at of [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35]) broken = damage(broken, at, 48);
      const error = await parseError(broken, { filename: `broken.${extension}` });
      expect(error.code).toBe('corrupted');
    },
  );

  it('a zip package without a document part is "corrupted"', async () => {
    const error = await parseError(buildZip([{ name: '[Content_Types].xml', data: '<Types/>' }]), {
      filename: 'x.docx',
    });
    expect(error.code).toBe('corrupted');
    expect(error.message).toContain('word/document.xml');
  });

  it('random bytes named .pdf are "corrupted" (mislabelled or damaged)', async () => {
    const random = Buffer.from(
      Array.from({ length: 4096 }, (_, index) => (index * 7919 + 13) & 255),
    );
    const error = await parseError(random, { filename: 'scan.pdf' });
    expect(error.code).toBe('corrupted');
    expect(error.message).toContain('PDF');
  });
});

describe('encrypted documents', () => {
  const pdf = buildPdf([{ lines: [{ x: 72, y: 700, size: 12, text: 'Secret' }] }], {
    userPassword: 'secret',
  });

  it('an encrypted PDF without a password is "encrypted" and says to pass one', async () => {
    const error = await parseError(pdf, { filename: 'locked.pdf' });
    expect(error.code).toBe('encrypted');
    expect(error.message).toContain('password');
  });

  it('a wrong password is "encrypted" too, with a different message', async () => {
    const error = await parseError(pdf, { filename: 'locked.pdf', password: 'guess' });
    expect(error.code).toBe('encrypted');
    expect(error.message).toContain('wrong');
  });

  it('a password-protected Office file (OLE EncryptedPackage) is "encrypted"', async () => {
    const ole = Buffer.alloc(2048);
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(ole);
    Buffer.from('EncryptedPackage', 'utf16le').copy(ole, 1024);
    const error = await parseError(ole, { filename: 'budget.xlsx' });
    expect(error.code).toBe('encrypted');
  });

  it('an encrypted zip entry is "encrypted"', async () => {
    const bytes = buildZip([
      { name: 'word/document.xml', data: 'x', encrypted: true, store: true },
    ]);
    expect((await parseError(bytes, { filename: 'a.docx' })).code).toBe('encrypted');
  });
});

describe('size limits', () => {
  it('a zip bomb stops at maxDecompressedBytes', async () => {
    // 32 MiB of spaces in the main part deflate to ~32 KiB (a 1000:1 ratio).
    const document = Buffer.concat([
      Buffer.from('<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>'),
      Buffer.alloc(32 * 1024 * 1024, 0x20),
      Buffer.from('</w:t></w:r></w:p></w:body></w:document>'),
    ]);
    const bomb = buildZip([{ name: 'word/document.xml', data: document }]);
    expect(bomb.length).toBeLessThan(100 * 1024);
    const error = await parseError(bomb, {
      filename: 'bomb.docx',
      maxDecompressedBytes: 4 * 1024 * 1024,
    });
    expect(error.code).toBe('too_large');
    expect(error.message).toContain('zip bomb');
  });

  it('a zip entry that lies about its size is still capped while inflating', async () => {
    const body = `<w:p><w:r><w:t>${'a'.repeat(4 * 1024 * 1024)}</w:t></w:r></w:p>`;
    const liar = buildZip([
      {
        name: 'word/document.xml',
        data: `<w:document xmlns:w="w"><w:body>${body}</w:body></w:document>`,
        declaredSize: 100,
      },
    ]);
    const error = await parseError(liar, {
      filename: 'liar.docx',
      maxDecompressedBytes: 1024 * 1024,
    });
    expect(error.code).toBe('too_large');
  });

  it('a file above maxBytes is refused before it is read', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'huge.txt');
    writeFileSync(path, 'x'.repeat(300_000));
    const error = await parseError(path, { maxBytes: 100_000 });
    expect(error.code).toBe('too_large');
    expect(error.message).toContain('maxBytes');
    expect((await parseError(Buffer.alloc(200_000, 0x61), { maxBytes: 100_000 })).code).toBe(
      'too_large',
    );
  });
});

describe('empty, unsupported and missing input', () => {
  it('an empty file is "empty"', async () => {
    const directory = temporaryDirectory();
    writeFileSync(join(directory, 'empty.pdf'), '');
    const error = await parseError(join(directory, 'empty.pdf'));
    expect(error.code).toBe('empty');
    expect(error.message).toContain('0 bytes');
  });

  it('a whitespace-only text file and a document with no text are "empty"', async () => {
    expect((await parseError(Buffer.from('  \n\n \t '), { filename: 'blank.txt' })).code).toBe(
      'empty',
    );
    expect((await parseError(buildDocx('<w:p/>'), { filename: 'blank.docx' })).code).toBe('empty');
  });

  it('a PDF of only scanned pages is "scanned" and suggests OCR', async () => {
    const error = await parseError(buildPdf([{ image: true }, { image: true }]), {
      filename: 'scan.pdf',
    });
    expect(error.code).toBe('scanned');
    expect(error.message).toContain('OCR');
  });

  it.each([
    [
      'PNG image',
      Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        Buffer.alloc(100),
      ]),
      'photo.png',
      /OCR/,
    ],
    [
      'legacy .doc',
      Buffer.concat([
        Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
        Buffer.alloc(1000),
      ]),
      'old.doc',
      /\.docx/,
    ],
    ['zip archive', buildZip([{ name: 'a.bin', data: 'x' }]), 'files.zip', /Extract/],
    [
      'OpenDocument text',
      buildZip([
        { name: 'mimetype', data: 'application/vnd.oasis.opendocument.text', store: true },
        { name: 'content.xml', data: '<x/>' },
      ]),
      'a.odt',
      /OpenDocument/,
    ],
    ['binary data', Buffer.from([0, 1, 2, 3, 0, 5, 6, 7, 8, 0, 10]), 'blob.bin', /not supported/],
  ])('%s is "unsupported_format" with a way forward', async (_name, bytes, filename, hint) => {
    const error = await parseError(bytes, { filename });
    expect(error.code).toBe('unsupported_format');
    expect(error.message).toMatch(hint);
  });

  it('a missing path is "not_found"', async () => {
    const error = await parseError(join(temporaryDirectory(), 'nope.pdf'));
    expect(error.code).toBe('not_found');
    expect(error.message).toContain('ENOENT');
  });
});

describe('time limits and cancellation', () => {
  it('stops with "timeout" when parsing takes longer than timeoutMs', async () => {
    const error = await parseError(devFile('pdf/federal-register-2020-17221.pdf'), {
      timeoutMs: 1,
    });
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('timeoutMs');
  });

  it('stops with "aborted" when the signal fires', async () => {
    const controller = new AbortController();
    const parsing = parseDocument(devFile('pdf/federal-register-2020-17221.pdf'), {
      cacheDir: false,
      signal: controller.signal,
    });
    controller.abort();
    await expect(parsing).rejects.toMatchObject({ code: 'aborted' });
    const already = AbortSignal.abort();
    expect((await parseError(devFile('md/readability-README.md'), { signal: already })).code).toBe(
      'aborted',
    );
  });

  it('errors serialise to JSON with code, source and format', async () => {
    const error = await parseError(Buffer.from('{'), { filename: 'x.json' });
    expect(error.toJSON()).toMatchObject({
      name: 'DocumentParseError',
      code: 'corrupted',
      source: 'x.json',
      format: 'json',
      isRetryable: false,
    });
  });
});
