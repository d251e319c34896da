import { deflateRawSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, index) => {
  let value = index;
  for (let bit = 0; bit < 8; bit += 1) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
  return value >>> 0;
});

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 255]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** One entry; `declaredSize` lets a test lie about the uncompressed size (as zip bombs do). */
export interface ZipEntrySpec {
  name: string;
  data: Buffer | string;
  store?: boolean;
  declaredSize?: number;
  encrypted?: boolean;
}

/** Build a zip archive (deflate or stored entries), for OOXML packages and zip bombs made in tests. */
export function buildZip(entries: ZipEntrySpec[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const raw = typeof entry.data === 'string' ? Buffer.from(entry.data, 'utf8') : entry.data;
    const compressed = entry.store ? raw : deflateRawSync(raw);
    const name = Buffer.from(entry.name, 'utf8');
    const crc = crc32(raw);
    const size = entry.declaredSize ?? raw.length;
    const flags = entry.encrypted ? 1 : 0;
    const method = entry.store ? 0 : 8;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, compressed);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A minimal DOCX whose body is the given `w:body` inner XML. */
export function buildDocx(bodyXml: string, extra: ZipEntrySpec[] = []): Buffer {
  return buildZip([
    {
      name: '[Content_Types].xml',
      data: '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    },
    {
      name: 'word/document.xml',
      data: `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${bodyXml}</w:body></w:document>`,
    },
    ...extra,
  ]);
}

const P =
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"';

/** One slide of a generated PPTX: shapes with explicit positions, an optional table and notes. */
export interface SlideSpec {
  title?: string;
  frames?: { x: number; y: number; paragraphs: { text: string; bullet?: 'char' | 'number' }[] }[];
  table?: string[][];
  notes?: string;
}

/** A minimal PPTX (presentation, slides, notes slides and their relationships). */
export function buildPptx(slides: SlideSpec[]): Buffer {
  const entries: ZipEntrySpec[] = [
    {
      name: '[Content_Types].xml',
      data: '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
    },
    {
      name: 'ppt/presentation.xml',
      data: `<?xml version="1.0"?><p:presentation ${P}><p:sldIdLst>${slides.map((_, index) => `<p:sldId id="${256 + index}" r:id="rId${index + 1}"/>`).join('')}</p:sldIdLst></p:presentation>`,
    },
    {
      name: 'ppt/_rels/presentation.xml.rels',
      data: `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${slides
        .map(
          (_, index) =>
            `<Relationship Id="rId${index + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide${index + 1}.xml"/>`,
        )
        .join('')}</Relationships>`,
    },
  ];
  const run = (text: string): string =>
    `<a:r><a:t>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</a:t></a:r>`;
  slides.forEach((slide, index) => {
    const number = index + 1;
    const shapes: string[] = [];
    // Frames are written bottom-up on purpose, so reading order must come from positions.
    for (const frame of [...(slide.frames ?? [])].reverse()) {
      const paragraphs = frame.paragraphs
        .map((paragraph) => {
          const bullet =
            paragraph.bullet === 'number'
              ? '<a:buAutoNum type="arabicPeriod"/>'
              : paragraph.bullet === 'char'
                ? '<a:buChar char="•"/>'
                : '<a:buNone/>';
          return `<a:p><a:pPr>${bullet}</a:pPr>${run(paragraph.text)}</a:p>`;
        })
        .join('');
      shapes.push(
        `<p:sp><p:nvSpPr><p:cNvPr id="${shapes.length + 10}" name="Text"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="${frame.x}" y="${frame.y}"/><a:ext cx="100" cy="100"/></a:xfrm></p:spPr><p:txBody><a:bodyPr/>${paragraphs}</p:txBody></p:sp>`,
      );
    }
    if (slide.title !== undefined) {
      shapes.push(
        `<p:sp><p:nvSpPr><p:cNvPr id="2" name="Title"/><p:cNvSpPr/><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="100" cy="100"/></a:xfrm></p:spPr><p:txBody><a:bodyPr/><a:p>${run(slide.title)}</a:p></p:txBody></p:sp>`,
      );
    }
    if (slide.table) {
      const rows = slide.table
        .map(
          (row) =>
            `<a:tr h="100">${row.map((cell) => `<a:tc><a:txBody><a:bodyPr/><a:p>${run(cell)}</a:p></a:txBody></a:tc>`).join('')}</a:tr>`,
        )
        .join('');
      shapes.push(
        `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="40" name="Table"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="900000"/><a:ext cx="100" cy="100"/></p:xfrm><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl>${rows}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`,
      );
    }
    entries.push({
      name: `ppt/slides/slide${number}.xml`,
      data: `<?xml version="1.0"?><p:sld ${P}><p:cSld><p:spTree>${shapes.join('')}</p:spTree></p:cSld></p:sld>`,
    });
    if (slide.notes !== undefined) {
      entries.push({
        name: `ppt/slides/_rels/slide${number}.xml.rels`,
        data: `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide" Target="../notesSlides/notesSlide${number}.xml"/></Relationships>`,
      });
      entries.push({
        name: `ppt/notesSlides/notesSlide${number}.xml`,
        data: `<?xml version="1.0"?><p:notes ${P}><p:cSld><p:spTree><p:sp><p:nvSpPr><p:cNvPr id="2" name="Image"/><p:cNvSpPr/><p:nvPr><p:ph type="sldImg"/></p:nvPr></p:nvSpPr><p:spPr/></p:sp><p:sp><p:nvSpPr><p:cNvPr id="3" name="Notes"/><p:cNvSpPr/><p:nvPr><p:ph type="body" idx="1"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:p>${run(slide.notes)}</a:p></p:txBody></p:sp><p:sp><p:nvSpPr><p:cNvPr id="4" name="Number"/><p:cNvSpPr/><p:nvPr><p:ph type="sldNum" idx="5"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:p>${run(String(number))}</a:p></p:txBody></p:sp></p:spTree></p:cSld></p:notes>`,
      });
    }
  });
  return buildZip(entries);
}

/** A minimal XLSX with one sheet of inline-string/number cells. */
export function buildXlsx(sheets: { name: string; rows: (string | number)[][] }[]): Buffer {
  const column = (index: number): string => String.fromCharCode(65 + index);
  const entries: ZipEntrySpec[] = [
    {
      name: '[Content_Types].xml',
      data: '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
    },
    {
      name: 'xl/workbook.xml',
      data: `<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>${sheets
        .map(
          (sheet, index) =>
            `<sheet name="${sheet.name}" sheetId="${index + 1}" r:id="rId${index + 1}"/>`,
        )
        .join('')}</sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheets
        .map(
          (_, index) =>
            `<Relationship Id="rId${index + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet${index + 1}.xml"/>`,
        )
        .join('')}</Relationships>`,
    },
  ];
  sheets.forEach((sheet, index) => {
    const rows = sheet.rows
      .map(
        (row, rowIndex) =>
          `<row r="${rowIndex + 1}">${row
            .map((cell, cellIndex) =>
              typeof cell === 'number'
                ? `<c r="${column(cellIndex)}${rowIndex + 1}"><v>${cell}</v></c>`
                : `<c r="${column(cellIndex)}${rowIndex + 1}" t="inlineStr"><is><t>${cell}</t></is></c>`,
            )
            .join('')}</row>`,
      )
      .join('');
    entries.push({
      name: `xl/worksheets/sheet${index + 1}.xml`,
      data: `<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows}</sheetData></worksheet>`,
    });
  });
  return buildZip(entries);
}
