import type { Element } from 'domhandler';
import type { Deadline } from './deadline.js';
import { readCoreProperties } from './docx-parser.js';
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
} from './xml.js';
import type { ZipArchive } from './zip-archive.js';

interface ShapeContent {
  /** Position on the slide (EMU), when the shape has its own. */
  y: number | undefined;
  x: number | undefined;
  isTitle: boolean;
  blocks: BlockDraft[];
}

/**
 * @internal PPTX: slides in presentation order (one page per slide), the title placeholder as
 * a level-1 heading, then text frames top-to-bottom/left-to-right (document order when shapes
 * inherit their position), bulleted and numbered paragraphs as lists, tables as rows, pictures
 * as image references, and the slide's speaker notes last.
 */
export async function parsePptx(archive: ZipArchive, deadline: Deadline): Promise<FormatResult> {
  const presentation = parseXml(archive.readText('ppt/presentation.xml') ?? '').find(
    (element) => element.name === 'p:presentation',
  );
  const relationships = parseRelationships(
    archive.readText('ppt/_rels/presentation.xml.rels'),
    'ppt',
  );
  const slideIds = path(presentation, 'p:sldIdLst');
  const slidePaths = (slideIds ? childElements(slideIds, 'p:sldId') : [])
    .map((slideId) => relationships.get(slideId.attribs['r:id'] ?? '')?.target)
    .filter((target): target is string => target !== undefined && archive.has(target));

  const builder = new DocumentBuilder();
  let firstTitle: string | undefined;
  let notesCount = 0;
  for (const [index, slidePath] of slidePaths.entries()) {
    await deadline.tick();
    const page = index + 1;
    builder.page(page);
    builder.resetHeadings();
    const slide = parseXml(archive.readText(slidePath) ?? '').find(
      (element) => element.name === 'p:sld',
    );
    const tree = path(slide, 'p:cSld', 'p:spTree');
    const shapes = tree ? readShapes(tree) : [];
    const positioned = shapes.every((shape) => shape.y !== undefined);
    const ordered = [
      ...shapes.filter((shape) => shape.isTitle),
      ...shapes.filter((shape) => !shape.isTitle),
    ];
    if (positioned) {
      ordered.sort(
        (a, b) => Number(b.isTitle) - Number(a.isTitle) || a.y! - b.y! || (a.x ?? 0) - (b.x ?? 0),
      );
    }
    for (const shape of ordered) for (const block of shape.blocks) builder.add(block);
    const title = shapes.find((shape) => shape.isTitle)?.blocks[0];
    if (!firstTitle && title?.type === 'heading') firstTitle = title.text;

    const slideDir = slidePath.slice(0, slidePath.lastIndexOf('/'));
    const slideName = slidePath.slice(slidePath.lastIndexOf('/') + 1);
    const slideRelationships = parseRelationships(
      archive.readText(`${slideDir}/_rels/${slideName}.rels`),
      slideDir,
    );
    const notesPath = [...slideRelationships.values()].find((relationship) =>
      relationship.type.endsWith('/notesSlide'),
    )?.target;
    const notes = notesPath ? readNotes(archive.readText(notesPath)) : '';
    if (notes) {
      notesCount += 1;
      builder.add({ type: 'paragraph', text: `Speaker notes: ${notes}` });
    }
  }
  const properties = readCoreProperties(archive.readText('docProps/core.xml'));
  return {
    pages: builder.build(),
    title: properties.title ?? firstTitle,
    metadata: { ...properties.metadata, slides: slidePaths.length, slidesWithNotes: notesCount },
  };
}

function readShapes(tree: Element): ShapeContent[] {
  const shapes: ShapeContent[] = [];
  for (const element of childElements(tree)) {
    const offset =
      path(element, 'p:spPr', 'a:xfrm', 'a:off') ??
      path(element, 'p:xfrm', 'a:off') ??
      path(element, 'p:grpSpPr', 'a:xfrm', 'a:off');
    const position = {
      y: numberOrUndefined(offset?.attribs.y),
      x: numberOrUndefined(offset?.attribs.x),
    };
    if (element.name === 'p:sp') {
      const placeholder = path(element, 'p:nvSpPr', 'p:nvPr', 'p:ph');
      const type = placeholder?.attribs.type;
      if (type === 'sldNum' || type === 'dt' || type === 'ftr') continue;
      const isTitle = type === 'title' || type === 'ctrTitle';
      const body = child(element, 'p:txBody');
      if (!body) continue;
      const blocks = isTitle ? titleBlocks(body) : textBodyBlocks(body);
      if (blocks.length > 0) shapes.push({ ...position, isTitle, blocks });
    } else if (element.name === 'p:graphicFrame') {
      const table = descendants(element, 'a:tbl')[0];
      if (table)
        shapes.push({
          ...position,
          isTitle: false,
          blocks: [{ type: 'table', rows: readTable(table) }],
        });
    } else if (element.name === 'p:grpSp') {
      // Children of a group use the group's coordinate space: keep their own order at the group's position.
      const inner = readShapes(element);
      const blocks = inner.flatMap((shape) => shape.blocks);
      if (blocks.length > 0) shapes.push({ ...position, isTitle: false, blocks });
    } else if (element.name === 'p:pic') {
      const description = path(element, 'p:nvPicPr', 'p:cNvPr');
      shapes.push({
        ...position,
        isTitle: false,
        blocks: [{ type: 'image', alt: description?.attribs.descr || description?.attribs.name }],
      });
    }
  }
  return shapes;
}

function titleBlocks(body: Element): BlockDraft[] {
  const text = childElements(body, 'a:p').map(paragraphText).join(' ').trim();
  return text ? [{ type: 'heading', text, level: 1 }] : [];
}

/** Paragraphs of a text frame; consecutive bulleted/numbered paragraphs become one list. */
function textBodyBlocks(body: Element): BlockDraft[] {
  const blocks: BlockDraft[] = [];
  let list: { ordered: boolean; items: string[] } | undefined;
  const flush = (): void => {
    if (list) blocks.push({ type: 'list', items: list.items, ordered: list.ordered });
    list = undefined;
  };
  for (const paragraph of childElements(body, 'a:p')) {
    const text = paragraphText(paragraph);
    if (!text.trim()) continue;
    const properties = child(paragraph, 'a:pPr');
    const ordered = child(properties, 'a:buAutoNum') !== undefined;
    const bulleted = ordered || child(properties, 'a:buChar') !== undefined;
    if (bulleted) {
      if (list && list.ordered !== ordered) flush();
      list ??= { ordered, items: [] };
      list.items.push(text);
    } else {
      flush();
      blocks.push({ type: 'paragraph', text });
    }
  }
  flush();
  return blocks;
}

function paragraphText(paragraph: Element): string {
  let text = '';
  const walk = (element: Element): void => {
    for (const node of element.children) {
      if (!isElement(node)) continue;
      if (node.name === 'a:t')
        text += node.children
          .map((textNode) => (textNode.type === 'text' ? textNode.data : ''))
          .join('');
      else if (node.name === 'a:br') text += '\n';
      else if (node.name === 'a:r' || node.name === 'a:fld') walk(node);
    }
  };
  walk(paragraph);
  return text;
}

function readTable(table: Element): string[][] {
  return childElements(table, 'a:tr').map((row) =>
    childElements(row, 'a:tc').map((cell) => {
      if (cell.attribs.hMerge === '1' || cell.attribs.vMerge === '1') return '';
      const body = child(cell, 'a:txBody');
      return body ? childElements(body, 'a:p').map(paragraphText).join('\n').trim() : '';
    }),
  );
}

function readNotes(xml: string | undefined): string {
  if (!xml) return '';
  const notes = parseXml(xml).find((element) => element.name === 'p:notes');
  const tree = path(notes, 'p:cSld', 'p:spTree');
  if (!tree) return '';
  const texts: string[] = [];
  for (const shape of descendants(tree, 'p:sp')) {
    const type = path(shape, 'p:nvSpPr', 'p:nvPr', 'p:ph')?.attribs.type;
    // The notes page also holds the slide image and the slide number: only the body is the notes text.
    if (type !== 'body') continue;
    const body = child(shape, 'p:txBody');
    if (body)
      texts.push(
        ...childElements(body, 'a:p')
          .map(paragraphText)
          .filter((text) => text.trim()),
      );
  }
  return texts.join('\n').trim();
}

function numberOrUndefined(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}
