import { load, type CheerioAPI } from 'cheerio/slim';
import type { AnyNode, Element } from 'domhandler';
import type { Deadline } from './deadline.js';
import { DocumentBuilder } from './document-builder.js';
import type { FormatResult } from './format-result.js';

/** Never content. */
const DROP_SELECTORS = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'iframe',
  'object',
  'embed',
  'form',
  'button',
  'select',
  'input',
  'textarea',
  'nav',
  'aside',
  'footer',
  'dialog',
  '[hidden]',
  '[aria-hidden="true"]',
  '[role="navigation"]',
  '[role="banner"]',
  '[role="contentinfo"]',
  '[role="complementary"]',
  '[role="search"]',
  '[role="dialog"]',
  // Wikipedia/MediaWiki chrome: edit links, citation markers, table of contents, nav boxes, jump links.
  '.mw-editsection',
  'sup.reference',
  '.toc',
  '#toc',
  '.navbox',
  '.mw-jump-link',
  '.noprint',
  '#siteSub',
  '#catlinks',
].join(',');

/** The first of these that holds real text is the main content. */
const MAIN_SELECTORS = [
  'main',
  '[role="main"]',
  '#mw-content-text',
  'article',
  '#content',
  '.post-content',
  '.entry-content',
  '.article-body',
  '#main',
];

/** Class/id words of page chrome; applied only to containers with little text or mostly links. */
const BOILERPLATE =
  /(^|[\s_-])(nav|navbar|menu|breadcrumbs?|sidebar|footer|masthead|banner|cookies?|consent|share|sharing|social|related|comments?|subscribe|newsletter|promo|advert|ads|sponsor|popup|modal|skip)([\s_-]|$)/i;

const BLOCK_TAGS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'center',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'ul',
  'tbody',
  'thead',
  'tfoot',
  'tr',
  'td',
  'th',
  'caption',
  'img',
]);

/**
 * @internal HTML: main content found with cheerio (semantic containers first, else the element
 * whose paragraphs hold the most text), page chrome dropped (scripts, styles, navigation,
 * footers, asides, cookie banners, MediaWiki edit links and citation markers), and the rest
 * turned into headings, paragraphs, lists, tables, code and images. Title from `<title>`
 * (else og:title, else the first h1) and the canonical URL go to `title`/`metadata`.
 */
export async function parseHtml(html: string, deadline: Deadline): Promise<FormatResult> {
  const $ = load(html);
  const title =
    cleanText($('head > title').first().text()) ||
    $('meta[property="og:title"]').attr('content')?.trim() ||
    cleanText($('h1').first().text()) ||
    undefined;
  const metadata: Record<string, unknown> = {};
  const canonical =
    $('link[rel="canonical"]').attr('href') ?? $('meta[property="og:url"]').attr('content');
  if (canonical) metadata.canonicalUrl = canonical.trim();
  const description =
    $('meta[name="description"]').attr('content') ??
    $('meta[property="og:description"]').attr('content');
  if (description) metadata.description = description.trim();
  const language = $('html').attr('lang');
  if (language) metadata.language = language;

  $(DROP_SELECTORS).remove();
  await deadline.tick();
  const root = findMainContent($);
  removeBoilerplate($, root);
  await deadline.tick();

  const builder = new DocumentBuilder();
  builder.page(1);
  new HtmlWalker($, builder).walk(root);
  return { pages: builder.build(), title, metadata };
}

function findMainContent($: CheerioAPI): Element {
  for (const selector of MAIN_SELECTORS) {
    const candidates = $(selector).toArray() as Element[];
    const best = candidates.sort((a, b) => $(b).text().length - $(a).text().length)[0];
    if (best && cleanText($(best).text()).length >= 200) return best;
  }
  // No semantic container: score parents by the text of their paragraphs (a small Readability).
  const scores = new Map<Element, number>();
  $('p, pre, td, blockquote').each((_, paragraph) => {
    const length = cleanText($(paragraph).text()).length;
    if (length < 25) return;
    const parent = paragraph.parent as Element | null;
    if (parent?.type === 'tag') scores.set(parent, (scores.get(parent) ?? 0) + length);
    const grandparent = parent?.parent as Element | null;
    if (grandparent?.type === 'tag')
      scores.set(grandparent, (scores.get(grandparent) ?? 0) + length / 2);
  });
  let best: Element | undefined;
  let bestScore = 0;
  for (const [element, score] of scores) {
    if (score > bestScore) {
      best = element;
      bestScore = score;
    }
  }
  return best ?? ($('body')[0] as Element | undefined) ?? ($.root()[0] as unknown as Element);
}

function removeBoilerplate($: CheerioAPI, root: Element): void {
  $(root)
    .find('div, section, ul, ol, header, span, table')
    .each((_, element) => {
      const marker = `${element.attribs.class ?? ''} ${element.attribs.id ?? ''}`;
      if (!BOILERPLATE.test(marker)) return;
      const text = cleanText($(element).text());
      const linkText = cleanText($(element).find('a').text());
      if (text.length < 200 || linkText.length / Math.max(1, text.length) > 0.5)
        $(element).remove();
    });
}

class HtmlWalker {
  private inline = '';

  constructor(
    private readonly $: CheerioAPI,
    private readonly builder: DocumentBuilder,
  ) {}

  walk(root: Element): void {
    this.visitChildren(root);
    this.flush();
  }

  private visitChildren(element: Element): void {
    for (const node of element.children) this.visit(node);
  }

  private visit(node: AnyNode): void {
    if (node.type === 'text') {
      this.inline += node.data;
      return;
    }
    if (node.type !== 'tag') return;
    const element = node as Element;
    const tag = element.name.toLowerCase();
    if (tag === 'br') {
      this.inline += '\n';
      return;
    }
    if (!BLOCK_TAGS.has(tag)) {
      this.visitChildren(element);
      return;
    }
    this.flush();
    const $element = this.$(element);
    switch (tag) {
      case 'h1':
      case 'h2':
      case 'h3':
      case 'h4':
      case 'h5':
      case 'h6':
        this.builder.add({
          type: 'heading',
          text: inlineText(element),
          level: Number(tag[1]),
        });
        return;
      case 'p':
      case 'figcaption':
      case 'summary':
      case 'dt':
      case 'dd':
      case 'caption':
        this.builder.add({ type: 'paragraph', text: inlineText(element) });
        return;
      case 'pre': {
        const code = $element.find('code').first();
        const className = `${code.attr('class') ?? ''} ${$element.attr('class') ?? ''}`;
        const language = /(?:language|lang)-([\w+#-]+)/.exec(className)?.[1];
        this.builder.add({ type: 'code', text: $element.text(), language });
        return;
      }
      case 'ul':
      case 'ol': {
        const items = $element
          .children('li')
          .toArray()
          .map((item) => inlineText(item as Element));
        this.builder.add({ type: 'list', items, ordered: tag === 'ol' });
        return;
      }
      case 'table': {
        if (isLayoutTable(this.$, element)) {
          $element.find('> tbody > tr > td, > tr > td, > thead > tr > td').each((_, cell) => {
            this.visitChildren(cell as Element);
            this.flush();
          });
          return;
        }
        const caption = cleanText($element.children('caption').text());
        if (caption) this.builder.add({ type: 'paragraph', text: caption });
        const rows = $element
          .find('tr')
          .toArray()
          .filter((row) => this.$(row).closest('table')[0] === element)
          .map((row) =>
            this.$(row)
              .children('th, td')
              .toArray()
              .flatMap((cell) => {
                const span = Math.min(20, Number((cell as Element).attribs.colspan ?? 1) || 1);
                return [inlineText(cell as Element), ...Array.from({ length: span - 1 }, () => '')];
              }),
          );
        this.builder.add({ type: 'table', rows });
        return;
      }
      case 'img': {
        const alt = element.attribs.alt?.trim();
        if (alt) this.builder.add({ type: 'image', alt, src: element.attribs.src });
        return;
      }
      case 'hr':
        return;
      default:
        this.visitChildren(element);
        this.flush();
    }
  }

  private flush(): void {
    const text = cleanText(this.inline.replace(/[ \t\r\f]*\n[ \t\r\f]*/g, '\n'));
    this.inline = '';
    if (text) this.builder.add({ type: 'paragraph', text });
  }
}

/** A table used for page layout (nested tables or long prose in cells) is walked as content, not rows. */
function isLayoutTable($: CheerioAPI, table: Element): boolean {
  const $table = $(table);
  if ($table.find('table').length > 0) return true;
  if ($table.attr('role') === 'presentation') return true;
  return $table
    .find('td')
    .toArray()
    .some(
      (cell) =>
        $(cell).find('p, div, h1, h2, h3, ul').length > 2 || cleanText($(cell).text()).length > 600,
    );
}

/** Text of an element with `<br>` as line breaks and block children separated by spaces. */
function inlineText(element: Element): string {
  let text = '';
  const walk = (node: AnyNode): void => {
    if (node.type === 'text') text += node.data;
    else if (node.type === 'tag') {
      const tag = (node as Element).name.toLowerCase();
      if (tag === 'br') text += '\n';
      else if (tag === 'img')
        text += (node as Element).attribs.alt ? ` ${(node as Element).attribs.alt} ` : '';
      else {
        const block = BLOCK_TAGS.has(tag);
        if (block) text += ' ';
        for (const child of (node as Element).children) walk(child);
        if (block) text += ' ';
      }
    }
  };
  for (const child of element.children) walk(child);
  return text.replace(/[ \t\r\f]*\n[ \t\r\f]*/g, '\n').replace(/[ \t\r\f]+/g, ' ');
}

function cleanText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
