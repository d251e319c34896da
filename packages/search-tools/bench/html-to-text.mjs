// HTML → text throughput of web_extractor's cheerio pipeline vs popular alternatives, on the
// saved real pages in test/fixtures/pages, in one run. Writes bench/results/html-to-text.json.
//
//   pnpm build && pnpm bench
//
// Compared, each producing the main content as text:
//   quiver      extractHtmlContent (cheerio/htmlparser2, boilerplate pruning, Markdown-like output)
//   readability @mozilla/readability on a linkedom DOM, article textContent
//   readability+turndown  the same article converted to Markdown by turndown (closest to our output)
//   turndown    turndown on the whole page (no main-content extraction)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { decodeBody, extractHtmlContent } from '../dist/index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const pages = [
  {
    name: 'wikipedia-mozilla',
    file: 'wikipedia-mozilla.html',
    snippets: [
      'Mozilla is a free-software community, created in 1998 by members of Netscape.',
      'Eich CEO promotion controversy',
      'Mozilla produces many products such as the Firefox web browser',
    ],
  },
  {
    name: 'keep-tabular-data (factorio)',
    file: 'keep-tabular-data.html',
    snippets: [
      'This week was the time to close and finish all the things that will go to 0.17.0.',
      'Implementation review',
      'Blueprint library',
    ],
  },
  {
    name: 'qq-deepmind (GBK)',
    file: 'qq-deepmind-gbk.html',
    snippets: ['这款产品具有极其重要的意义', 'DeepMind希望DNC可以推动计算行业实现更多突破。'],
  },
].map((page) => {
  const bytes = readFileSync(join(here, '..', 'test', 'fixtures', 'pages', page.file));
  return { ...page, bytes: bytes.length, html: decodeBody(bytes, 'text/html').text };
});

const norm = (text) => text.normalize('NFC').replace(/\s+/g, ' ').trim();
const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
turndown.remove(['script', 'style', 'noscript']);

const contenders = {
  quiver: (html) => extractHtmlContent(html, { url: 'https://example.org/' }).text,
  readability: (html) => {
    const { document } = parseHTML(html);
    return new Readability(document).parse()?.textContent ?? '';
  },
  'readability+turndown': (html) => {
    const { document } = parseHTML(html);
    const article = new Readability(document).parse();
    return article === null ? '' : turndown.turndown(article.content ?? '');
  },
  turndown: (html) => turndown.turndown(html),
};

const MIN_RUNS = 20;
const MIN_MS = 1_500;
const rows = [];
for (const page of pages) {
  for (const [name, run] of Object.entries(contenders)) {
    for (let warm = 0; warm < 3; warm += 1) run(page.html);
    const times = [];
    let output = '';
    const started = performance.now();
    while (times.length < MIN_RUNS || performance.now() - started < MIN_MS) {
      const start = performance.now();
      output = run(page.html);
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    const found = page.snippets.filter((snippet) => norm(output).includes(norm(snippet))).length;
    rows.push({
      page: page.name,
      library: name,
      runs: times.length,
      medianMs: Number(median.toFixed(2)),
      p90Ms: Number(times[Math.floor(times.length * 0.9)].toFixed(2)),
      mbPerSecond: Number((page.bytes / 1e6 / (median / 1000)).toFixed(2)),
      outputChars: output.length,
      snippetsFound: `${found}/${page.snippets.length}`,
    });
  }
}

console.log(`Node ${process.version}, ${new Date().toISOString()}`);
console.table(rows);
const totals = Object.keys(contenders).map((library) => {
  const mine = rows.filter((row) => row.library === library);
  const ms = mine.reduce((sum, row) => sum + row.medianMs, 0);
  const found = mine.reduce((sum, row) => sum + Number(row.snippetsFound.split('/')[0]), 0);
  const all = mine.reduce((sum, row) => sum + Number(row.snippetsFound.split('/')[1]), 0);
  return { library, totalMedianMs: Number(ms.toFixed(2)), snippetsFound: `${found}/${all}` };
});
console.table(totals);
writeFileSync(
  join(here, 'results', 'html-to-text.json'),
  `${JSON.stringify({ node: process.version, date: new Date().toISOString(), pages: pages.map(({ name, file, bytes }) => ({ name, file, bytes })), rows, totals }, null, 2)}\n`,
);
