import { describe, expect, it } from '@jest/globals';
import { extractHtmlContent } from '../src/index.js';
import { fixture } from './helpers/fixture-server.js';

// Snippets from /work/shared/eval/docs/manifest.json (copied with the pages, see fixtures/README.md).
const norm = (text: string): string => text.normalize('NFC').replace(/\s+/g, ' ').trim();

describe('extractHtmlContent on saved real pages', () => {
  const wikipedia = extractHtmlContent(
    fixture('pages', 'wikipedia-mozilla.html').toString('utf8'),
    {
      url: 'https://en.wikipedia.org/wiki/Mozilla',
    },
  );
  const factorio = extractHtmlContent(fixture('pages', 'keep-tabular-data.html').toString('utf8'), {
    url: 'https://www.factorio.com/blog/post/fff-282',
  });

  it('keeps the article text of the Wikipedia page', () => {
    for (const snippet of [
      'Mozilla is a free-software community, created in 1998 by members of Netscape.',
      'Eich CEO promotion controversy',
      'Mozilla produces many products such as the Firefox web browser',
    ]) {
      expect(norm(wikipedia.text)).toContain(norm(snippet));
    }
    expect(wikipedia.title).toBe('Mozilla - Wikipedia');
    expect(wikipedia.canonicalUrl).toBe('https://en.wikipedia.org/wiki/Mozilla');
    expect(wikipedia.language).toBe('en');
  });

  it('drops Wikipedia navigation, edit links and scripts', () => {
    expect(wikipedia.text).not.toContain('Navigation menu');
    expect(wikipedia.text).not.toContain('Personal tools');
    expect(wikipedia.text).not.toMatch(/\[edit\]/);
    expect(wikipedia.text).not.toContain('RLQ=window.RLQ');
    expect(wikipedia.text).toMatch(/^# Mozilla$/m);
    expect(wikipedia.text).toMatch(/^## History$/m);
  });

  it('lists outgoing links as absolute URLs without duplicates or fragments', () => {
    const urls = wikipedia.links.map((link) => link.url);
    expect(urls).toContain('https://en.wikipedia.org/wiki/Netscape');
    expect(new Set(urls).size).toBe(urls.length);
    expect(urls.every((url) => /^https?:\/\//.test(url))).toBe(true);
    // Site navigation (main page, random article, search) is not part of the article.
    expect(urls).not.toContain('https://en.wikipedia.org/wiki/Main_Page');
    expect(urls).not.toContain('https://en.wikipedia.org/wiki/Special:Random');
  });

  it('keeps the blog post and its data table, drops the site chrome', () => {
    for (const snippet of [
      'This week was the time to close and finish all the things that will go to 0.17.0.',
      'Implementation review',
      'Blueprint library',
    ]) {
      expect(norm(factorio.text)).toContain(norm(snippet));
    }
    // The progress matrix is rendered as a pipe table with its header row.
    expect(factorio.text).toMatch(
      /^\| \| General UX \| UX draft \|.*Implementation review \| Final review \|$/m,
    );
    expect(factorio.text).toMatch(/^### Blueprint library$/m);
    expect(factorio.title).toBe('Friday Facts #282 - 0.17 in sight | Factorio');
  });

  it('renders lists, quotes, code and inline links in Markdown style', () => {
    const page = extractHtmlContent(
      `<html lang="zh"><head><title>T</title><link rel="canonical" href="/canonical"></head><body>
        <nav><a href="/home">Home</a></nav>
        <div class="cookie-banner">We use cookies</div>
        <article>
          <h1>Heading</h1>
          <p>Intro with a <a href="https://example.org/a">link</a> and <code>inline code</code>.</p>
          <ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul>
          <ol start="3"><li>third</li></ol>
          <blockquote><p>quoted</p></blockquote>
          <pre>line 1
  indented line 2</pre>
          <p style="display:none">hidden text</p>
          <footer>article footer stays</footer>
        </article>
        <footer>site footer goes</footer>
      </body></html>`,
      { url: 'https://example.com/page', inlineLinks: true },
    );
    expect(page.text).toBe(
      [
        '# Heading',
        '',
        'Intro with a [link](https://example.org/a) and `inline code`.',
        '',
        '- one',
        '  - nested',
        '- two',
        '',
        '3. third',
        '',
        '> quoted',
        '',
        '```',
        'line 1',
        '  indented line 2',
        '```',
        '',
        'article footer stays',
      ].join('\n'),
    );
    expect(page.canonicalUrl).toBe('https://example.com/canonical');
    expect(page.language).toBe('zh');
    expect(page.links).toEqual([{ url: 'https://example.org/a', text: 'link' }]);
  });

  it('keeps content that a page wraps in a <form> (ASP.NET WebForms) but drops the controls', () => {
    const page = extractHtmlContent(
      '<body><form id="aspnetForm"><input type="hidden" name="__VIEWSTATE" value="x"><div id="content"><h1>Report</h1><p>The quarterly numbers went up by a small but steady amount this time.</p><button>Print</button></div></form></body>',
    );
    expect(page.text).toBe(
      '# Report\n\nThe quarterly numbers went up by a small but steady amount this time.',
    );
  });

  it('survives malformed and empty markup', () => {
    expect(extractHtmlContent('').text).toBe('');
    const broken = extractHtmlContent('<p>unclosed <b>bold <i>text<div>and more</p></table>');
    expect(broken.text).toContain('unclosed bold text');
    expect(broken.text).toContain('and more');
  });
});
