// Throughput and extraction quality of @quiver/doc-parser against popular alternatives, side by
// side in one run on the dev set: PDFs (pages/s) vs pdf-parse 2.x, DOCX (MB/s) vs mammoth's raw
// text. Quality: snippet recall (manifest rule) and word agreement between the two extractions.
// Run `pnpm build` first; `pnpm bench` writes bench/results/throughput.json.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from '../dist/index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const devSet = join(here, '..', 'test', 'fixtures', 'dev-set');
const manifest = JSON.parse(readFileSync(join(devSet, 'manifest.json'), 'utf8'));
const norm = (text) => text.normalize('NFC').replace(/\s+/g, ' ').trim();
const REPEATS = { pdf: 15, docx: 60 };

/** Multiset Jaccard of the two texts' words: 1 = same words, same counts. */
function agreement(a, b) {
  const count = (text) => {
    const map = new Map();
    // Words only: table pipes and Markdown marks are layout, not content.
    for (const word of norm(text).toLowerCase().split(' ')) {
      if (/[\p{L}\p{N}]/u.test(word)) map.set(word, (map.get(word) ?? 0) + 1);
    }
    return map;
  };
  const left = count(a);
  const right = count(b);
  let shared = 0;
  let union = 0;
  for (const word of new Set([...left.keys(), ...right.keys()])) {
    shared += Math.min(left.get(word) ?? 0, right.get(word) ?? 0);
    union += Math.max(left.get(word) ?? 0, right.get(word) ?? 0);
  }
  return union === 0 ? 1 : shared / union;
}

const recall = (text, snippets) =>
  snippets.filter((snippet) => norm(text).includes(norm(snippet))).length;

/** A long-lived baseline process: one request per line, one JSON answer per line. */
function startBaseline(library) {
  const child = spawn(process.execPath, [join(here, 'baseline-worker.mjs'), library], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async run(path) {
      child.stdin.write(path + '\n');
      const { value } = await lines.next();
      return JSON.parse(value);
    },
    stop: () => child.stdin.end(),
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// The machine is shared with other work: the two libraries take turns, one extraction each, so
// both see the same load; each side's median over all turns is reported.
const baselines = { pdf: startBaseline('pdf-parse'), docx: startBaseline('mammoth') };
const rows = [];
for (const entry of manifest.files.filter(
  (file) => file.format === 'pdf' || file.format === 'docx',
)) {
  const path = join(devSet, entry.file);
  const bytes = readFileSync(path).length;
  const worker = baselines[entry.format];
  // Warm-up (module loading, JIT) for both, and the texts used for recall and agreement.
  const document = await parseDocument(path, { cacheDir: false });
  const other = await worker.run(path);
  const mineTimes = [];
  const otherTimes = [];
  for (let turn = 0; turn < REPEATS[entry.format]; turn += 1) {
    const start = performance.now();
    await parseDocument(path, { cacheDir: false });
    mineTimes.push(performance.now() - start);
    const answer = await worker.run(path);
    if (answer.ok) otherTimes.push(answer.ms);
  }
  rows.push({
    file: entry.file,
    format: entry.format,
    bytes,
    pages: document.pages.length,
    snippets: entry.snippets.length,
    quiver: { medianMs: median(mineTimes), recall: recall(document.text, entry.snippets) },
    baseline: other.ok
      ? {
          library: entry.format === 'pdf' ? 'pdf-parse@2.4.5' : 'mammoth@1.13.0 extractRawText',
          medianMs: median(otherTimes),
          recall: recall(other.text, entry.snippets),
        }
      : { library: entry.format === 'pdf' ? 'pdf-parse' : 'mammoth', error: other.error },
    agreement: other.ok ? Number(agreement(document.text, other.text).toFixed(3)) : null,
  });
}
for (const worker of Object.values(baselines)) worker.stop();

const summary = {};
for (const format of ['pdf', 'docx']) {
  const subset = rows.filter((row) => row.format === format);
  const total = (pick) => subset.reduce((sum, row) => sum + pick(row), 0);
  const unit = format === 'pdf' ? (row) => row.pages : (row) => row.bytes / (1024 * 1024);
  const quiverMs = total((row) => row.quiver.medianMs);
  const baselineMs = total((row) => row.baseline.medianMs ?? Number.NaN);
  summary[format] = {
    unit: format === 'pdf' ? 'pages/s' : 'MB/s',
    quiver: Number((total(unit) / (quiverMs / 1000)).toFixed(2)),
    baseline: Number((total(unit) / (baselineMs / 1000)).toFixed(2)),
    quiverRecall: `${total((row) => row.quiver.recall)}/${total((row) => row.snippets)}`,
    baselineRecall: `${total((row) => row.baseline.recall ?? 0)}/${total((row) => row.snippets)}`,
  };
}

console.log(
  'file                                       | pages | quiver ms | baseline ms | quiver recall | baseline recall | agreement',
);
console.log(
  '-------------------------------------------|-------|-----------|-------------|---------------|-----------------|----------',
);
for (const row of rows) {
  console.log(
    [
      row.file.padEnd(42),
      String(row.pages).padStart(5),
      row.quiver.medianMs.toFixed(1).padStart(9),
      (row.baseline.medianMs?.toFixed(1) ?? 'error').padStart(11),
      `${row.quiver.recall}/${row.snippets}`.padStart(13),
      `${row.baseline.recall ?? 0}/${row.snippets}`.padStart(15),
      String(row.agreement).padStart(9),
    ].join(' | '),
  );
}
console.log();
for (const [format, value] of Object.entries(summary)) {
  console.log(
    `${format.toUpperCase()}: quiver ${value.quiver} ${value.unit} (recall ${value.quiverRecall}) vs ${format === 'pdf' ? 'pdf-parse' : 'mammoth'} ${value.baseline} ${value.unit} (recall ${value.baselineRecall})`,
  );
}
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(
  join(here, 'results', 'throughput.json'),
  JSON.stringify(
    { date: new Date().toISOString(), node: process.version, repeats: REPEATS, summary, rows },
    null,
    2,
  ) + '\n',
);
