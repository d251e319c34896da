import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A BEIR-format collection: `corpus.jsonl`, `queries.jsonl` and `qrels.tsv` (or `qrels/test.tsv`). */
export interface BeirCollection {
  corpus: { id: string; title: string; text: string }[];
  queries: { id: string; text: string }[];
  /** query id → (document id → graded relevance). */
  qrels: Map<string, Map<string, number>>;
}

/** A run: query id → ranked document ids with scores, best first. */
export type Run = Map<string, { id: string; score: number }[]>;

/** Mean metrics of a run, trec_eval conventions. */
export interface RunMetrics {
  queries: number;
  ndcgAt10: number;
  recallAt100: number;
  mrrAt10: number;
}

/**
 * Read a BEIR collection from a directory.
 * @throws Error naming the missing or malformed file.
 */
export function readBeirCollection(directory: string): BeirCollection {
  const readJsonl = (name: string): Record<string, unknown>[] => {
    const text = readFileSync(join(directory, name), 'utf8');
    return text
      .split(/\r?\n/)
      .filter((line) => line.trim())
      .map((line, i) => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch (error) {
          throw new Error(`${name} line ${i + 1} is not JSON`, { cause: error });
        }
      });
  };
  const corpus = readJsonl('corpus.jsonl').map((row) => ({
    id: String(row['_id']),
    title: typeof row['title'] === 'string' ? row['title'] : '',
    text: typeof row['text'] === 'string' ? row['text'] : '',
  }));
  const queries = readJsonl('queries.jsonl').map((row) => ({
    id: String(row['_id']),
    text: String(row['text'] ?? ''),
  }));
  let qrelsText: string;
  try {
    qrelsText = readFileSync(join(directory, 'qrels.tsv'), 'utf8');
  } catch {
    qrelsText = readFileSync(join(directory, 'qrels', 'test.tsv'), 'utf8');
  }
  return { corpus, queries, qrels: parseQrels(qrelsText) };
}

/** Parse BEIR (`query-id corpus-id score`, optional header) or TREC (`qid 0 docid rel`) qrels. */
export function parseQrels(text: string): Map<string, Map<string, number>> {
  const qrels = new Map<string, Map<string, number>>();
  for (const line of text.split(/\r?\n/)) {
    const fields = line.trim().split(/\s+/);
    let query: string | undefined;
    let document: string | undefined;
    let value: string | undefined;
    if (fields.length === 3) [query, document, value] = fields;
    else if (fields.length === 4) [query, , document, value] = fields;
    const score = Number(value);
    if (query === undefined || document === undefined || !Number.isFinite(score)) continue;
    if (!qrels.has(query)) qrels.set(query, new Map());
    qrels.get(query)!.set(document, score);
  }
  return qrels;
}

/**
 * nDCG@10 (linear gain), Recall@100 and MRR@10 averaged over the queries with at least one relevant
 * document, as trec_eval computes them (a run is re-sorted by score, ties by document id descending;
 * a query missing from the run scores 0). Agrees with `shared/eval/ir/evaluate.mjs`.
 */
export function evaluateRun(run: Run, qrels: Map<string, Map<string, number>>): RunMetrics {
  let queries = 0;
  let ndcg = 0;
  let recall = 0;
  let mrr = 0;
  for (const [query, judged] of qrels) {
    const relevant = [...judged.values()].filter((gain) => gain > 0);
    if (relevant.length === 0) continue;
    queries++;
    const ranked = [...(run.get(query) ?? [])]
      .sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .map((entry) => entry.id);
    let dcg = 0;
    let firstHit = 0;
    let found = 0;
    ranked.slice(0, 100).forEach((id, i) => {
      const gain = judged.get(id) ?? 0;
      if (gain <= 0) return;
      found++;
      if (i < 10) {
        dcg += gain / Math.log2(i + 2);
        if (firstHit === 0) firstHit = i + 1;
      }
    });
    const ideal = relevant.sort((a, b) => b - a).slice(0, 10);
    const idealDcg = ideal.reduce((sum, gain, i) => sum + gain / Math.log2(i + 2), 0);
    ndcg += dcg / idealDcg;
    recall += found / relevant.length;
    mrr += firstHit > 0 ? 1 / firstHit : 0;
  }
  const mean = (value: number) => (queries > 0 ? value / queries : 0);
  return { queries, ndcgAt10: mean(ndcg), recallAt100: mean(recall), mrrAt10: mean(mrr) };
}

/** A run in TREC format: `qid Q0 docid rank score tag`, one line per result. */
export function formatTrecRun(run: Run, tag: string): string {
  const lines: string[] = [];
  for (const [query, results] of run) {
    results.forEach((result, i) =>
      lines.push(`${query} Q0 ${result.id} ${i + 1} ${result.score} ${tag}`),
    );
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
