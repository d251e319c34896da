import type { ChildNode, Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';

/** @internal Parse an XML part (OOXML) into a DOM; element names keep their prefixes (`w:p`). */
export function parseXml(xml: string): Element[] {
  const document = parseDocument(xml, { xmlMode: true, decodeEntities: true });
  return document.children.filter(isElement);
}

/** @internal */
export function isElement(node: ChildNode): node is Element {
  return node.type === 'tag' || node.type === 'script' || node.type === 'style';
}

/** @internal Element children, optionally only those named `name`. */
export function childElements(element: Element, name?: string): Element[] {
  return element.children.filter(
    (node): node is Element => isElement(node) && (name === undefined || node.name === name),
  );
}

/** @internal First child element named `name`. */
export function child(element: Element | undefined, name: string): Element | undefined {
  if (!element) return undefined;
  for (const node of element.children) if (isElement(node) && node.name === name) return node;
  return undefined;
}

/** @internal Follow a path of child names: `path(sp, 'p:nvSpPr', 'p:nvPr', 'p:ph')`. */
export function path(element: Element | undefined, ...names: string[]): Element | undefined {
  let current = element;
  for (const name of names) current = child(current, name);
  return current;
}

/** @internal All descendants named `name`, in document order (not descending into `stop` elements). */
export function descendants(
  element: Element,
  name: string,
  stop?: (element: Element) => boolean,
): Element[] {
  const found: Element[] = [];
  const walk = (node: Element): void => {
    for (const childNode of node.children) {
      if (!isElement(childNode)) continue;
      if (childNode.name === name) found.push(childNode);
      if (stop?.(childNode)) continue;
      walk(childNode);
    }
  };
  walk(element);
  return found;
}

/** @internal Concatenated text of all text nodes below `element`. */
export function textContent(element: Element): string {
  let text = '';
  const walk = (node: ChildNode): void => {
    if (node.type === 'text') text += node.data;
    else if ('children' in node) for (const childNode of node.children) walk(childNode);
  };
  walk(element);
  return text;
}

/** @internal Resolve a relationships part (`_rels/*.rels`) into id → target path (relative to `baseDir`). */
export function parseRelationships(
  xml: string | undefined,
  baseDir: string,
): Map<string, { target: string; type: string; external: boolean }> {
  const map = new Map<string, { target: string; type: string; external: boolean }>();
  if (!xml) return map;
  for (const root of parseXml(xml)) {
    for (const relationship of descendants(root, 'Relationship')) {
      const id = relationship.attribs.Id;
      const target = relationship.attribs.Target;
      if (!id || !target) continue;
      const external = relationship.attribs.TargetMode === 'External';
      map.set(id, {
        target: external ? target : resolvePartPath(baseDir, target),
        type: relationship.attribs.Type ?? '',
        external,
      });
    }
  }
  return map;
}

/** @internal Join a part-relative target onto a directory inside the package (`ppt/slides` + `../notesSlides/x.xml`). */
export function resolvePartPath(baseDir: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = baseDir.split('/').filter(Boolean);
  for (const piece of target.split('/')) {
    if (piece === '..') parts.pop();
    else if (piece !== '.' && piece !== '') parts.push(piece);
  }
  return parts.join('/');
}
