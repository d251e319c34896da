import type { Element } from 'domhandler';
import type { Deadline } from './deadline.js';
import { DocumentBuilder, type BlockDraft } from './document-builder.js';
import type { FormatResult } from './format-result.js';
import {
  child,
  childElements,
  descendants,
  isElement,
  parseRelationships,
  parseXml,
  path,
  textContent,
} from './xml.js';
import type { ZipArchive } from './zip-archive.js';

interface ParagraphStyle {
  name: string;
  basedOn?: string;
  outlineLevel?: number;
}

interface DocxContext {
  styles: Map<string, ParagraphStyle>;
  /** numId → ilvl → true when the list level is numbered (not bullets). */
  numbering: Map<string, Map<string, boolean>>;
  images: Map<string, string>;
  usesRenderedBreaks: boolean;
}

/** Elements whose text never shows: deleted text, field instructions, property bags, VML fallbacks. */
const SKIPPED = new Set([
  'w:delText',
  'w:instrText',
  'w:rPr',
  'w:pPr',
  'w:tblPr',
  'w:trPr',
  'w:tcPr',
  'mc:Fallback',
  'w:fldData',
]);

/**
 * @internal DOCX: reads the OOXML parts directly (document, styles, numbering, footnotes,
 * core properties). Headings come from paragraph styles (`heading N`, `Title`, outline level),
 * lists from numbering (numbered vs bullets), tables row by row, text boxes after their anchor
 * paragraph, footnotes at the end. Pages follow Word's own rendered page breaks when saved.
 */
export async function parseDocx(archive: ZipArchive, deadline: Deadline): Promise<FormatResult> {
  const documentXml = archive.readText('word/document.xml') ?? '';
  const root = parseXml(documentXml).find((element) => element.name === 'w:document');
  const body = child(root, 'w:body');
  const context: DocxContext = {
    styles: parseStyles(archive.readText('word/styles.xml')),
    numbering: parseNumbering(archive.readText('word/numbering.xml')),
    images: new Map(),
    usesRenderedBreaks: documentXml.includes('w:lastRenderedPageBreak'),
  };
  for (const [id, relationship] of parseRelationships(
    archive.readText('word/_rels/document.xml.rels'),
    'word',
  )) {
    if (relationship.type.endsWith('/image')) context.images.set(id, relationship.target);
  }
  const builder = new DocumentBuilder();
  builder.page(1);
  const state = { page: 1, list: undefined as { ordered: boolean; items: string[] } | undefined };
  const flushList = (): void => {
    if (state.list)
      builder.add({ type: 'list', items: state.list.items, ordered: state.list.ordered });
    state.list = undefined;
  };

  const visitBlocks = async (container: Element): Promise<void> => {
    for (const element of childElements(container)) {
      await deadline.tick();
      if (element.name === 'w:p') {
        const paragraph = readParagraph(element, context);
        if (paragraph.pageBreaksBefore > 0) {
          flushList();
          state.page += paragraph.pageBreaksBefore;
          builder.page(state.page);
        }
        if (paragraph.list && paragraph.text.trim()) {
          if (state.list && state.list.ordered !== paragraph.list.ordered) flushList();
          state.list ??= { ordered: paragraph.list.ordered, items: [] };
          state.list.items.push(paragraph.text);
        } else {
          flushList();
          if (paragraph.headingLevel !== undefined)
            builder.add({ type: 'heading', text: paragraph.text, level: paragraph.headingLevel });
          else if (paragraph.text.trim()) builder.add({ type: 'paragraph', text: paragraph.text });
        }
        for (const image of paragraph.images) builder.add(image);
        for (const box of paragraph.textBoxes) await visitBlocks(box);
        if (paragraph.pageBreaksAfter > 0) {
          flushList();
          state.page += paragraph.pageBreaksAfter;
          builder.page(state.page);
        }
      } else if (element.name === 'w:tbl') {
        flushList();
        builder.add({ type: 'table', rows: readTable(element, context) });
      } else if (element.name === 'w:sdt') {
        const content = child(element, 'w:sdtContent');
        if (content) await visitBlocks(content);
      } else if (
        element.name === 'w:customXml' ||
        element.name === 'w:ins' ||
        element.name === 'w:smartTag'
      ) {
        await visitBlocks(element);
      }
    }
  };
  if (body) await visitBlocks(body);
  flushList();

  const bodyTitle = builder
    .build()
    .flatMap((page) => page.blocks)
    .find((block) => block.type === 'heading')?.text;
  const notes = readNotes(archive.readText('word/footnotes.xml'), 'w:footnote', context).concat(
    readNotes(archive.readText('word/endnotes.xml'), 'w:endnote', context),
  );
  if (notes.length > 0) {
    builder.resetHeadings();
    builder.add({ type: 'heading', text: 'Notes', level: 1 });
    for (const note of notes) builder.add({ type: 'paragraph', text: note });
  }

  const properties = readCoreProperties(archive.readText('docProps/core.xml'));
  return {
    pages: builder.build(),
    title: properties.title ?? bodyTitle,
    metadata: properties.metadata,
  };
}

interface ParagraphRead {
  text: string;
  headingLevel: number | undefined;
  list: { ordered: boolean; level: number } | undefined;
  images: BlockDraft[];
  textBoxes: Element[];
  pageBreaksBefore: number;
  pageBreaksAfter: number;
}

function readParagraph(paragraph: Element, context: DocxContext): ParagraphRead {
  const properties = child(paragraph, 'w:pPr');
  const styleId = path(properties, 'w:pStyle')?.attribs['w:val'];
  const outline = path(properties, 'w:outlineLvl')?.attribs['w:val'];
  let headingLevel = headingLevelOf(styleId, context.styles);
  if (headingLevel === undefined && outline !== undefined && Number(outline) < 9)
    headingLevel = Number(outline) + 1;

  const numberingProperties = path(properties, 'w:numPr');
  const numId = path(numberingProperties, 'w:numId')?.attribs['w:val'];
  const ilvl = path(numberingProperties, 'w:ilvl')?.attribs['w:val'] ?? '0';
  const list =
    numId !== undefined && numId !== '0' && headingLevel === undefined
      ? { ordered: context.numbering.get(numId)?.get(ilvl) ?? false, level: Number(ilvl) }
      : undefined;

  const result: ParagraphRead = {
    text: '',
    headingLevel,
    list,
    images: [],
    textBoxes: [],
    pageBreaksBefore: path(properties, 'w:pageBreakBefore') && !context.usesRenderedBreaks ? 1 : 0,
    pageBreaksAfter: 0,
  };
  let sawText = false;
  const walk = (element: Element): void => {
    for (const node of element.children) {
      if (node.type === 'text') continue;
      if (!isElement(node) || SKIPPED.has(node.name)) continue;
      switch (node.name) {
        case 'w:t':
          result.text += textContent(node);
          if (result.text.trim()) sawText = true;
          break;
        case 'w:tab':
        case 'w:ptab':
          result.text += '\t';
          break;
        case 'w:cr':
          result.text += '\n';
          break;
        case 'w:br':
          if (node.attribs['w:type'] === 'page' && !context.usesRenderedBreaks) {
            if (sawText) result.pageBreaksAfter += 1;
            else result.pageBreaksBefore += 1;
          } else if (node.attribs['w:type'] !== 'page') result.text += '\n';
          break;
        case 'w:lastRenderedPageBreak':
          if (sawText) result.pageBreaksAfter += 1;
          else result.pageBreaksBefore += 1;
          break;
        case 'w:noBreakHyphen':
          result.text += '-';
          break;
        case 'w:softHyphen':
          break;
        case 'w:txbxContent':
          result.textBoxes.push(node);
          break;
        case 'pic:pic': {
          const description = path(node, 'pic:nvPicPr', 'pic:cNvPr');
          const embed = descendants(node, 'a:blip')[0]?.attribs['r:embed'];
          result.images.push({
            type: 'image',
            alt: description?.attribs.descr || description?.attribs.name,
            src: embed ? context.images.get(embed) : undefined,
          });
          break;
        }
        default:
          walk(node);
      }
    }
  };
  walk(paragraph);
  return result;
}

function readTable(table: Element, context: DocxContext): string[][] {
  const rows: string[][] = [];
  for (const row of childElements(table, 'w:tr')) {
    const cells: string[] = [];
    for (const cell of childElements(row, 'w:tc')) {
      const merged = path(cell, 'w:tcPr', 'w:vMerge');
      const continuesAbove = merged !== undefined && merged.attribs['w:val'] !== 'restart';
      const parts: string[] = [];
      for (const element of childElements(cell)) {
        if (element.name === 'w:p') parts.push(readParagraph(element, context).text);
        else if (element.name === 'w:tbl')
          parts.push(
            readTable(element, context)
              .map((nested) => nested.join(' | '))
              .join('\n'),
          );
      }
      cells.push(continuesAbove ? '' : parts.join('\n').trim());
      const span = Number(path(cell, 'w:tcPr', 'w:gridSpan')?.attribs['w:val'] ?? 1);
      for (let extra = 1; extra < span; extra += 1) cells.push('');
    }
    rows.push(cells);
  }
  return rows;
}

function readNotes(xml: string | undefined, name: string, context: DocxContext): string[] {
  if (!xml) return [];
  const notes: string[] = [];
  for (const root of parseXml(xml)) {
    for (const note of descendants(root, name)) {
      if (
        note.attribs['w:type'] === 'separator' ||
        note.attribs['w:type'] === 'continuationSeparator'
      )
        continue;
      const text = childElements(note, 'w:p')
        .map((paragraph) => readParagraph(paragraph, context).text.trim())
        .filter(Boolean)
        .join(' ');
      if (text) notes.push(`[${note.attribs['w:id'] ?? notes.length + 1}] ${text}`);
    }
  }
  return notes;
}

function parseStyles(xml: string | undefined): Map<string, ParagraphStyle> {
  const styles = new Map<string, ParagraphStyle>();
  if (!xml) return styles;
  for (const root of parseXml(xml)) {
    for (const style of descendants(root, 'w:style')) {
      const id = style.attribs['w:styleId'];
      if (!id || (style.attribs['w:type'] && style.attribs['w:type'] !== 'paragraph')) continue;
      const outline = path(style, 'w:pPr', 'w:outlineLvl')?.attribs['w:val'];
      styles.set(id, {
        name: (path(style, 'w:name')?.attribs['w:val'] ?? id).toLowerCase(),
        basedOn: path(style, 'w:basedOn')?.attribs['w:val'],
        outlineLevel: outline !== undefined ? Number(outline) : undefined,
      });
    }
  }
  return styles;
}

function headingLevelOf(
  styleId: string | undefined,
  styles: Map<string, ParagraphStyle>,
): number | undefined {
  let id = styleId;
  for (let depth = 0; id && depth < 10; depth += 1) {
    const style = styles.get(id);
    const name = style?.name ?? id.toLowerCase();
    const match = /^heading\s*(\d)$/.exec(name);
    if (match) return Number(match[1]);
    if (name === 'title') return 1;
    if (style?.outlineLevel !== undefined && style.outlineLevel < 9) return style.outlineLevel + 1;
    id = style?.basedOn;
  }
  return undefined;
}

function parseNumbering(xml: string | undefined): Map<string, Map<string, boolean>> {
  const result = new Map<string, Map<string, boolean>>();
  if (!xml) return result;
  const abstract = new Map<string, Map<string, boolean>>();
  for (const root of parseXml(xml)) {
    for (const definition of descendants(root, 'w:abstractNum')) {
      const levels = new Map<string, boolean>();
      for (const level of childElements(definition, 'w:lvl')) {
        const format = path(level, 'w:numFmt')?.attribs['w:val'] ?? 'bullet';
        levels.set(level.attribs['w:ilvl'] ?? '0', format !== 'bullet' && format !== 'none');
      }
      abstract.set(definition.attribs['w:abstractNumId'] ?? '', levels);
    }
    for (const instance of descendants(root, 'w:num')) {
      const abstractId = path(instance, 'w:abstractNumId')?.attribs['w:val'];
      if (instance.attribs['w:numId'] && abstractId !== undefined) {
        result.set(instance.attribs['w:numId'], abstract.get(abstractId) ?? new Map());
      }
    }
  }
  return result;
}

/** @internal Title, author and dates from `docProps/core.xml` (shared by DOCX, PPTX and XLSX). */
export function readCoreProperties(xml: string | undefined): {
  title: string | undefined;
  metadata: Record<string, unknown>;
} {
  const metadata: Record<string, unknown> = {};
  let title: string | undefined;
  if (!xml) return { title, metadata };
  for (const root of parseXml(xml)) {
    for (const element of childElements(root)) {
      const value = textContent(element).trim();
      if (!value) continue;
      if (element.name === 'dc:title') title = value;
      else if (element.name === 'dc:creator') metadata.author = value;
      else if (element.name === 'dc:subject') metadata.subject = value;
      else if (element.name === 'dcterms:created') metadata.created = value;
      else if (element.name === 'dcterms:modified') metadata.modified = value;
      else if (element.name === 'cp:keywords') metadata.keywords = value;
    }
  }
  return { title, metadata };
}
