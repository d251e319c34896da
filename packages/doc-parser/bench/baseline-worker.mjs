// Serves one baseline library from its own process (pdf-parse bundles another pdf.js version,
// and two pdf.js versions must never share a process). Reads one file path per stdin line,
// extracts it, and answers one JSON line: { ok, ms, text } or { ok: false, error }.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const library = process.argv[2];

async function extract(bytes) {
  if (library === 'pdf-parse') {
    const { PDFParse } = await import('pdf-parse');
    const parser = new PDFParse({ data: new Uint8Array(bytes) });
    try {
      return (await parser.getText()).text;
    } finally {
      await parser.destroy();
    }
  }
  if (library === 'mammoth') {
    const mammoth = (await import('mammoth')).default;
    return (await mammoth.extractRawText({ buffer: bytes })).value;
  }
  throw new Error(`unknown library ${library}`);
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  try {
    const bytes = readFileSync(line.trim());
    const start = performance.now();
    const text = await extract(bytes);
    const ms = performance.now() - start;
    process.stdout.write(JSON.stringify({ ok: true, ms, text }) + '\n');
  } catch (error) {
    process.stdout.write(
      JSON.stringify({ ok: false, error: String(error?.message ?? error) }) + '\n',
    );
  }
}
