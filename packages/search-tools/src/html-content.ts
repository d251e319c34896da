import { load } from 'cheerio/slim';
import type { AnyNode, Element, ParentNode } from 'domhandler';

/** A link found in the main content. */
export interface ExtractedLink {
  /** Absolute http(s) URL. */
  url: string;
  /** The link text (or `title`/`aria-label` when it has none). */
  text: string;
}

/** What {@link extractHtmlContent} returns. */
export interface HtmlContent {
  /** `og:title`, else `<title>`, else the first `<h1>`; empty when the page has none. */
  title: string;
  /** `<link rel="canonical">` resolved against the page URL, when present and http(s). */
  canonicalUrl?: string;
  /** `<meta name="description">` or `og:description`. */
  description?: string;
  /** `<html lang>`. */
  language?: string;
  /** `article:published_time`, `datePublished` or the first `<time datetime>` in the content. */
  publishedAt?: string;
  /** The main content as Markdown-like text: `#` headings, `-` lists, `>` quotes, fenced code, pipe tables. */
  text: string;
  /** Outgoing http(s) links of the main content, in document order, without duplicates. */
  links: ExtractedLink[];
}

/** Options of {@link extractHtmlContent}. */
export interface HtmlContentOptions {
  /** The page URL: resolves relative links and the canonical URL. */
  url?: string;
  /** Write links inline as `[text](url)` (default false: plain text, links listed in `links`). */
  inlineLinks?: boolean;
  /** Keep images as `![alt](src)` (default false). */
  includeImages?: boolean;
}

// Never content: code, styling, embedded apps, form controls. (Not <form> itself: ASP.NET
// WebForms pages wrap the whole body in one.)
const DROP_TAGS = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'iframe',
  'object',
  'embed',
  'applet',
  'input',
  'select',
  'textarea',
  'button',
  'option',
  'label',
  'dialog',
  'map',
  'audio',
  'video',
  'source',
  'track',
  'link',
  'meta',
  'head',
  'title',
  'base',
  'nav',
  'aside',
  'menu',
]);
// Page chrome: dropped unless it sits inside the content container itself (an article's <header>).
const CHROME_TAGS = new Set(['header', 'footer']);
const DROP_ROLES =
  /^(navigation|banner|contentinfo|complementary|search|dialog|alertdialog|menu|menubar|toolbar|tablist)$/i;
// Class/id words of boilerplate blocks. Matched as whole words between separators so that
// "header_cell" inside a data table is not mistaken for a page header (tables are exempt anyway).
const BOILERPLATE =
  /(^|[\s_-])(nav|navbar|navbox|navigation|menu|breadcrumbs?|sidebar|side-?bar|footer|header|masthead|banner|cookies?|consent|gdpr|advert|advertisement|ads?|adsense|sponsor(ed)?|promo|social|share|sharing|related|recommend(ed|ations)?|comments?|disqus|newsletter|subscribe|signup|popup|modal|pagination|pager|toc|skip-?link|editsection|catlinks|printfooter|noprint|hidden|jump-?to)([\s_-]|$)/i;
const CONTENT_HINT = /(^|[\s_-])(article|content|entry|post|story|body|main|text|blog)([\s_-]|$)/i;
const BOILERPLATE_CONTAINERS = new Set([
  'div',
  'section',
  'ul',
  'ol',
  'span',
  'p',
  'table',
  'dl',
  'header',
  'footer',
]);
const BLOCK_TAGS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'figure',
  'figcaption',
  'address',
  'details',
  'summary',
  'dl',
  'dt',
  'dd',
  'center',
  'body',
  'html',
  'fieldset',
  'hgroup',
]);
const HIDDEN_STYLE = /(^|;)\s*(display\s*:\s*none|visibility\s*:\s*hidden)/i;
const SCORED_TAGS = new Set(['p', 'pre', 'td', 'blockquote', 'li', 'dd']);

interface RenderContext {
  base: URL | undefined;
  inlineLinks: boolean;
  includeImages: boolean;
  links: ExtractedLink[];
  seen: Set<string>;
}

/**
 * Extract the main content of an HTML page with cheerio: drop scripts, styles, navigation,
 * headers/footers, sidebars, cookie banners and other boilerplate, pick the block that holds the
 * article (landmarks first, then paragraph-density scoring), and render it as Markdown-like text.
 *
 * @param html - The decoded HTML.
 * @param options - Page URL (for links), inline-link and image rendering.
 * @returns Title, canonical URL, metadata, text and outgoing links.
 * @example
 * const page = extractHtmlContent('<title>Hi</title><article><h1>Hi</h1><p>Text</p></article>');
 * page.text; // '# Hi\n\nText'
 */
export function extractHtmlContent(html: string, options: HtmlContentOptions = {}): HtmlContent {
  const $ = load(html);
  const base = safeUrl(options.url);
  const root = $.root()[0] as unknown as ParentNode;
  // One walk for the metadata instead of one selector query per field (each walks the whole tree).
  const meta = collectMetadata(root);
  const title = meta.get('og:title') ?? meta.get('title') ?? meta.get('h1') ?? '';
  const canonicalHref = meta.get('canonical');
  const canonical = canonicalHref === undefined ? undefined : resolveHttpUrl(canonicalHref, base);
  const description = meta.get('description') ?? meta.get('og:description');
  const language = meta.get('lang');
  let publishedAt =
    meta.get('article:published_time') ??
    meta.get('datepublished') ??
    meta.get('date') ??
    meta.get('time:datepublished');

  const body = (findFirst(root, (element) => element.name === 'body') ?? root) as ParentNode;
  pruneBoilerplate(body);
  const main = pickMainContent(body);
  publishedAt ??= findFirst(
    main,
    (element) => element.name === 'time' && element.attribs.datetime !== undefined,
  )?.attribs.datetime;

  const context: RenderContext = {
    base,
    inlineLinks: options.inlineLinks ?? false,
    includeImages: options.includeImages ?? false,
    links: [],
    seen: new Set(),
  };
  const text = tidy(renderChildren(main.children, context));
  return {
    title,
    ...(canonical !== undefined ? { canonicalUrl: canonical } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(language !== undefined ? { language } : {}),
    ...(publishedAt !== undefined ? { publishedAt } : {}),
    text,
    links: context.links,
  };
}

function collectMetadata(root: ParentNode): Map<string, string> {
  const found = new Map<string, string>();
  const keep = (key: string, value: string | undefined): void => {
    const cleaned = value?.replace(/\s+/g, ' ').trim();
    if (cleaned && !found.has(key)) found.set(key, cleaned);
  };
  const visit = (node: ParentNode): void => {
    for (const child of node.children) {
      if (!isElement(child)) continue;
      const attribs = child.attribs;
      switch (child.name) {
        case 'html':
          keep('lang', attribs.lang);
          break;
        case 'title':
          keep('title', textContent(child));
          break;
        case 'h1':
          if (!found.has('h1')) keep('h1', textContent(child));
          break;
        case 'meta': {
          const key = (attribs.property ?? attribs.name ?? attribs.itemprop)?.toLowerCase();
          if (key !== undefined) keep(key, attribs.content);
          break;
        }
        case 'link':
          if (attribs.rel !== undefined && /(^|\s)canonical(\s|$)/i.test(attribs.rel))
            keep('canonical', attribs.href);
          break;
        default:
          if (attribs.itemprop === 'datePublished')
            keep('time:datepublished', attribs.datetime ?? attribs.content);
      }
      visit(child);
    }
  };
  visit(root);
  return found;
}

function safeUrl(value: string | undefined): URL | undefined {
  if (value === undefined) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

function resolveHttpUrl(href: string, base: URL | undefined): string | undefined {
  try {
    const url = new URL(href.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function isElement(node: AnyNode): node is Element {
  return node.type === 'tag' || node.type === 'script' || node.type === 'style';
}

function findFirst(
  node: ParentNode,
  predicate: (element: Element) => boolean,
): Element | undefined {
  for (const child of node.children) {
    if (!isElement(child)) continue;
    if (predicate(child)) return child;
    const found = findFirst(child, predicate);
    if (found !== undefined) return found;
  }
  return undefined;
}

function removeNode(node: AnyNode): void {
  const parent = node.parent;
  if (parent === null) return;
  const index = parent.children.indexOf(node as never);
  if (index !== -1) parent.children.splice(index, 1);
  node.parent = null;
}

function isBoilerplate(element: Element, insideTable: boolean, insideContent: boolean): boolean {
  const name = element.name;
  if (DROP_TAGS.has(name)) return true;
  if (CHROME_TAGS.has(name) && !insideContent) return true;
  const attribs = element.attribs;
  if (attribs.hidden !== undefined || attribs['aria-hidden'] === 'true') return true;
  if (attribs.style !== undefined && HIDDEN_STYLE.test(attribs.style)) return true;
  if (attribs.role !== undefined && DROP_ROLES.test(attribs.role)) return true;
  if (insideTable || !BOILERPLATE_CONTAINERS.has(name)) return false;
  const names = `${attribs.class ?? ''} ${attribs.id ?? ''}`;
  return BOILERPLATE.test(names) && !CONTENT_HINT.test(names);
}

function pruneBoilerplate(node: ParentNode, insideTable = false, insideContent = false): void {
  for (const child of [...node.children]) {
    if (child.type === 'comment' || child.type === 'directive' || child.type === 'cdata') {
      removeNode(child);
      continue;
    }
    if (!isElement(child)) continue;
    if (isBoilerplate(child, insideTable, insideContent)) {
      removeNode(child);
      continue;
    }
    pruneBoilerplate(
      child,
      insideTable || child.name === 'table',
      insideContent ||
        child.name === 'article' ||
        child.name === 'main' ||
        child.attribs.role === 'main',
    );
  }
}

// Text lengths are asked for the same subtrees again and again while scoring; the tree no
// longer changes by then, so they are computed once per node.
const textLengths = new WeakMap<AnyNode, number>();
const linkLengths = new WeakMap<AnyNode, number>();

function textLength(node: AnyNode): number {
  if (node.type === 'text')
    return node.data.trim().length === 0 ? 0 : node.data.replace(/\s+/g, ' ').length;
  if (!isElement(node)) return 0;
  const known = textLengths.get(node);
  if (known !== undefined) return known;
  let total = 0;
  for (const child of node.children) total += textLength(child);
  textLengths.set(node, total);
  return total;
}

function linkTextLength(node: AnyNode): number {
  if (!isElement(node)) return 0;
  if (node.name === 'a') return textLength(node);
  const known = linkLengths.get(node);
  if (known !== undefined) return known;
  let total = 0;
  for (const child of node.children) total += linkTextLength(child);
  linkLengths.set(node, total);
  return total;
}

function collectElements(
  node: ParentNode,
  into: Element[],
  predicate: (element: Element) => boolean,
): void {
  for (const child of node.children) {
    if (!isElement(child)) continue;
    if (predicate(child)) into.push(child);
    collectElements(child, into, predicate);
  }
}

function pickMainContent(body: ParentNode): ParentNode {
  const bodyLength = textLength(body as AnyNode);
  const substantial = (element: Element): boolean =>
    textLength(element) >= Math.min(200, bodyLength * 0.25);

  // Landmarks a page uses to say where its content is.
  const landmarks: Element[] = [];
  collectElements(
    body,
    landmarks,
    (element) => element.name === 'main' || element.attribs.role === 'main',
  );
  if (landmarks.length === 1 && substantial(landmarks[0]!)) return landmarks[0]!;
  const articles: Element[] = [];
  collectElements(
    body,
    articles,
    (element) => element.name === 'article' || element.attribs.itemprop === 'articleBody',
  );
  if (articles.length === 1 && substantial(articles[0]!)) return articles[0]!;

  // Otherwise: score containers by the paragraphs they hold (a parent earns a paragraph's full
  // score, the grandparent half), discounted by how much of their text is link text.
  const scored: Element[] = [];
  collectElements(body, scored, (element) => SCORED_TAGS.has(element.name));
  const scores = new Map<Element, number>();
  for (const paragraph of scored) {
    const length = textLength(paragraph);
    if (length < 25) continue;
    const score = 1 + Math.min(Math.floor(length / 100), 3);
    const parent = paragraph.parent;
    if (parent === null || !isElement(parent)) continue;
    scores.set(parent, (scores.get(parent) ?? 0) + score);
    const grandparent = parent.parent;
    if (grandparent !== null && isElement(grandparent)) {
      scores.set(grandparent, (scores.get(grandparent) ?? 0) + score / 2);
    }
  }
  let best: Element | undefined;
  let bestScore = 0;
  for (const [element, score] of scores) {
    const length = textLength(element);
    const density = length === 0 ? 1 : linkTextLength(element) / length;
    const adjusted = score * (1 - density);
    if (adjusted > bestScore) {
      best = element;
      bestScore = adjusted;
    }
  }
  if (best === undefined || textLength(best) < bodyLength * 0.2) return body;
  // Lists and table rows are parts, not wholes: climb to the block that contains them.
  let container: Element = best;
  while (
    ['ul', 'ol', 'tr', 'tbody', 'thead', 'table', 'dl'].includes(container.name) &&
    container.parent !== null &&
    isElement(container.parent)
  ) {
    container = container.parent;
  }
  return container;
}

function renderChildren(nodes: AnyNode[], context: RenderContext): string {
  let out = '';
  for (const node of nodes) out += renderNode(node, context);
  return out;
}

function inline(nodes: AnyNode[], context: RenderContext): string {
  return renderChildren(nodes, context).replace(/\s+/g, ' ').trim();
}

function renderNode(node: AnyNode, context: RenderContext): string {
  if (node.type === 'text') return node.data.replace(/\s+/g, ' ');
  if (!isElement(node)) return '';
  const name = node.name;
  switch (name) {
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6': {
      const text = inline(node.children, context);
      return text === '' ? '' : `\n\n${'#'.repeat(Number(name[1]))} ${text}\n\n`;
    }
    case 'br':
      return '\n';
    case 'hr':
      return '\n\n---\n\n';
    case 'pre': {
      const code = textContent(node).replace(/^\n+|\s+$/g, '');
      return code === '' ? '' : `\n\n\`\`\`\n${code}\n\`\`\`\n\n`;
    }
    case 'code':
    case 'kbd':
    case 'samp': {
      const code = textContent(node).replace(/\s+/g, ' ').trim();
      return code === '' ? '' : `\`${code}\``;
    }
    case 'blockquote': {
      const inner = tidy(renderChildren(node.children, context));
      return inner === ''
        ? ''
        : `\n\n${inner
            .split('\n')
            .map((line) => (line === '' ? '>' : `> ${line}`))
            .join('\n')}\n\n`;
    }
    case 'ul':
    case 'ol':
      return renderList(node, context);
    case 'li':
      // A stray <li> outside a list.
      return `\n\n- ${inline(node.children, context)}\n\n`;
    case 'table':
      return renderTable(node, context);
    case 'a':
      return renderLink(node, context);
    case 'img': {
      if (!context.includeImages) return '';
      const src =
        node.attribs.src === undefined ? undefined : resolveHttpUrl(node.attribs.src, context.base);
      const alt = (node.attribs.alt ?? '').replace(/\s+/g, ' ').trim();
      return src === undefined ? '' : `![${alt}](${src})`;
    }
    default: {
      const inner = renderChildren(node.children, context);
      return BLOCK_TAGS.has(name) || name === 'tr' ? `\n\n${inner}\n\n` : inner;
    }
  }
}

function textContent(node: AnyNode): string {
  if (node.type === 'text') return node.data;
  if (!isElement(node)) return '';
  if (node.name === 'br') return '\n';
  let out = '';
  for (const child of node.children) out += textContent(child);
  return out;
}

function renderLink(node: Element, context: RenderContext): string {
  const text = inline(node.children, context);
  const href = node.attribs.href;
  if (href === undefined || href.startsWith('#') || /^\s*javascript:/i.test(href)) return text;
  const url = resolveHttpUrl(href, context.base);
  if (url === undefined) return text;
  const label = text || (node.attribs.title ?? node.attribs['aria-label'] ?? '').trim();
  if (!context.seen.has(url)) {
    context.seen.add(url);
    context.links.push({ url, text: label });
  }
  return context.inlineLinks && text !== '' ? `[${text}](${url})` : text;
}

function renderList(node: Element, context: RenderContext): string {
  const ordered = node.name === 'ol';
  const start = Number(node.attribs.start ?? '1') || 1;
  const items: string[] = [];
  let index = 0;
  for (const child of node.children) {
    if (!isElement(child)) continue;
    const rendered =
      child.name === 'li'
        ? tidy(renderChildren(child.children, context))
        : tidy(renderNode(child, context));
    // A nested list follows its item's text directly, without a blank line.
    const body = rendered.replace(/\n\n(?=(?:[-*]|\d+\.) )/g, '\n');
    if (body === '') continue;
    const marker = ordered ? `${start + index}.` : '-';
    index += 1;
    // Nested content is indented under its item; deeper lists indent again as they recurse.
    const [first = '', ...rest] = body.split('\n');
    items.push(
      [`${marker} ${first}`, ...rest.map((line) => (line === '' ? '' : `  ${line}`))].join('\n'),
    );
  }
  return items.length === 0 ? '' : `\n\n${items.join('\n')}\n\n`;
}

function renderTable(node: Element, context: RenderContext): string {
  const rows: Element[] = [];
  collectElements(node, rows, (element) => element.name === 'tr');
  const nested = findFirst(node, (element) => element.name === 'table') !== undefined;
  const cellsOf = (row: Element): Element[] =>
    row.children.filter(
      (child): child is Element => isElement(child) && (child.name === 'td' || child.name === 'th'),
    );
  const layout =
    nested ||
    rows.length === 0 ||
    rows.some((row) => cellsOf(row).some((cell) => textLength(cell) > 400));
  if (layout) {
    // A table used for page layout: its cells are blocks of content, not data.
    return `\n\n${rows
      .map((row) =>
        cellsOf(row)
          .map((cell) => `\n\n${renderChildren(cell.children, context)}\n\n`)
          .join(''),
      )
      .join('')}\n\n`;
  }
  const grid = rows
    .map((row) =>
      cellsOf(row).flatMap((cell) => {
        const text = inline(cell.children, context).replace(/\|/g, '\\|');
        const span = Math.min(Number(cell.attribs.colspan ?? '1') || 1, 20);
        return [text, ...new Array<string>(span - 1).fill('')];
      }),
    )
    .filter((cells) => cells.some((cell) => cell !== ''));
  if (grid.length === 0) return '';
  const width = Math.max(...grid.map((cells) => cells.length));
  const line = (cells: string[]): string =>
    `| ${[...cells, ...new Array<string>(width - cells.length).fill('')].join(' | ')} |`;
  const [header, ...body] = grid;
  const caption = findFirst(node, (element) => element.name === 'caption');
  const title = caption === undefined ? '' : `${inline(caption.children, context)}\n\n`;
  return `\n\n${title}${[line(header!), `|${' --- |'.repeat(width)}`, ...body.map(line)].join('\n')}\n\n`;
}

/** Trim lines (outside code fences), collapse runs of blank lines, trim the whole. */
function tidy(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let inFence = false;
  let blank = 0;
  for (const raw of lines) {
    if (raw.startsWith('```')) inFence = !inFence;
    let line: string;
    if (inFence || raw.startsWith('```')) line = raw.trimEnd();
    else {
      const collapsed = raw.replace(/[ \t]+/g, ' ').trim();
      // Keep the indentation of nested list items; any other leading space is an artefact.
      const indent = /^( {2,})(?:[-*] |\d+\. )/.exec(raw.replace(/\t/g, '  '))?.[1] ?? '';
      line = indent + collapsed;
    }
    if (line === '' && !inFence) {
      blank += 1;
      if (blank > 1) continue;
    } else {
      blank = 0;
    }
    out.push(line);
  }
  return out.join('\n').trim();
}
