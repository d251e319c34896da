import { createHash } from 'node:crypto';

/** One page of a generated PDF: text lines (x, y, size, text) and/or a full-page image (a "scan"). */
export interface PdfPageSpec {
  lines?: { x: number; y: number; size: number; text: string }[];
  image?: boolean;
  /** Write the content stream as FlateDecode data that is not valid zlib (a damaged page). */
  damaged?: boolean;
}

const PAD = Buffer.from('28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A', 'hex');

function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, index) => index);
  let j = 0;
  for (let i = 0; i < 256; i += 1) {
    j = (j + s[i]! + key[i % key.length]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  let i = 0;
  j = 0;
  for (let index = 0; index < data.length; index += 1) {
    i = (i + 1) & 255;
    j = (j + s[i]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[index] = data[index]! ^ s[(s[i]! + s[j]!) & 255]!;
  }
  return out;
}

const md5 = (...parts: Buffer[]): Buffer => createHash('md5').update(Buffer.concat(parts)).digest();
const padPassword = (password: string): Buffer =>
  Buffer.concat([Buffer.from(password, 'latin1'), PAD]).subarray(0, 32);

/**
 * A minimal valid PDF (Helvetica text, optional image-only pages). With `userPassword` it is
 * encrypted with the PDF standard security handler (revision 2, RC4 40-bit), the scheme every
 * reader supports, so the tests exercise real decryption and real password checks.
 */
export function buildPdf(
  pages: PdfPageSpec[],
  options: { userPassword?: string; ownerPassword?: string } = {},
): Buffer {
  const objects: (Buffer | string)[] = [];
  const id = createHash('md5').update('quiver-test').digest();
  let key: Buffer | undefined;
  let encryptDictionary = '';
  if (options.userPassword !== undefined) {
    const owner = rc4(
      md5(padPassword(options.ownerPassword ?? 'owner')).subarray(0, 5),
      padPassword(options.userPassword),
    );
    const permissions = Buffer.alloc(4);
    permissions.writeInt32LE(-4);
    key = md5(padPassword(options.userPassword), owner, permissions, id).subarray(0, 5);
    const user = rc4(key, PAD);
    encryptDictionary = `<< /Filter /Standard /V 1 /R 2 /O <${owner.toString('hex')}> /U <${user.toString('hex')}> /P -4 >>`;
  }
  const encrypt = (objectNumber: number, data: Buffer): Buffer => {
    if (!key) return data;
    const salt = Buffer.from([
      objectNumber & 255,
      (objectNumber >> 8) & 255,
      (objectNumber >> 16) & 255,
      0,
      0,
    ]);
    return rc4(md5(key, salt).subarray(0, 10), data);
  };
  const pageRefs: number[] = [];
  // 1 catalog, 2 pages, 3 font, 4 image; then page/content pairs.
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  const pixels = Buffer.alloc(64 * 64, 0x80);
  objects[4] = Buffer.concat([
    Buffer.from(
      `<< /Type /XObject /Subtype /Image /Width 64 /Height 64 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length ${pixels.length} >>\nstream\n`,
    ),
    encrypt(4, pixels),
    Buffer.from('\nendstream'),
  ]);
  let next = 5;
  for (const page of pages) {
    const pageNumber = next;
    const contentNumber = next + 1;
    next += 2;
    pageRefs.push(pageNumber);
    const escape = (text: string): string => text.replace(/[\\()]/g, (char) => `\\${char}`);
    let content = '';
    if (page.image) content += 'q 612 0 0 792 0 0 cm /Im1 Do Q\n';
    for (const line of page.lines ?? [])
      content += `BT /F1 ${line.size} Tf ${line.x} ${line.y} Td (${escape(line.text)}) Tj ET\n`;
    const raw = page.damaged
      ? Buffer.from([0x78, 0x9c, 0xff, 0xfe, 0xfd, 0x00, 0x13, 0x37, 0x42, 0x42])
      : Buffer.from(content, 'latin1');
    const data = encrypt(contentNumber, raw);
    objects[pageNumber] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 4 0 R >> >> /Contents ${contentNumber} 0 R >>`;
    objects[contentNumber] = Buffer.concat([
      Buffer.from(
        `<< /Length ${data.length}${page.damaged ? ' /Filter /FlateDecode' : ''} >>\nstream\n`,
      ),
      data,
      Buffer.from('\nendstream'),
    ]);
  }
  objects[2] = `<< /Type /Pages /Kids [${pageRefs.map((ref) => `${ref} 0 R`).join(' ')}] /Count ${pageRefs.length} >>`;
  let encryptNumber: number | undefined;
  if (encryptDictionary) {
    encryptNumber = next;
    objects[next] = encryptDictionary;
    next += 1;
  }
  const chunks: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let length = chunks[0]!.length;
  for (let number = 1; number < next; number += 1) {
    offsets[number] = length;
    const body = objects[number]!;
    const chunk = Buffer.concat([
      Buffer.from(`${number} 0 obj\n`),
      typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
      Buffer.from('\nendobj\n'),
    ]);
    chunks.push(chunk);
    length += chunk.length;
  }
  let xref = `xref\n0 ${next}\n0000000000 65535 f \n`;
  for (let number = 1; number < next; number += 1)
    xref += `${String(offsets[number]).padStart(10, '0')} 00000 n \n`;
  const trailer = `trailer\n<< /Size ${next} /Root 1 0 R /ID [<${id.toString('hex')}> <${id.toString('hex')}>]${encryptNumber ? ` /Encrypt ${encryptNumber} 0 R` : ''} >>\nstartxref\n${length}\n%%EOF\n`;
  chunks.push(Buffer.from(xref + trailer, 'latin1'));
  return Buffer.concat(chunks);
}
