import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigurationError } from '@quiver/core';
import { KnowledgeBase } from '@quiver/rag-retrieval';
import type { QuiverConfig } from '../config.js';
import { ExitCode, styles } from '../io.js';
import { indexDocuments, listDocuments } from '../knowledge-base-indexing.js';
import { progressBar } from '../progress-bar.js';
import type { CommandEnvironment } from './tools.js';

interface KbOptions {
  kb?: string;
  name: string;
}

/** The knowledge base directory: `--kb PATH`, else the configured `knowledgeBases[name].path`, else `./.quiver/kb/<name>`. */
export function knowledgeBaseDirectory(options: KbOptions, config: QuiverConfig): string {
  if (options.kb !== undefined) return resolve(options.kb);
  const configured = config.knowledgeBases[options.name]?.path;
  return resolve(configured ?? `.quiver/kb/${options.name}`);
}

/** `quiver rag index <dir>` and `quiver rag query "..."`. */
export function registerRagCommands(program: Command, environment: CommandEnvironment): void {
  const rag = program
    .command('rag')
    .description(
      'Index documents into a knowledge base and query it (hybrid BM25 + vector search)',
    );

  rag
    .command('index')
    .description(
      'Parse and index every document under a folder (pdf, docx, pptx, xlsx, md, txt, html)',
    )
    .argument('<dir>', 'folder (or single file) to index')
    .option('--kb <path>', 'knowledge base directory')
    .option('--name <name>', 'configured knowledge base name', 'default')
    .option('--json', 'print the report as JSON')
    .action(async (dir: string, options: KbOptions & { json?: boolean }) => {
      const { io } = environment;
      const directory = knowledgeBaseDirectory(options, environment.config());
      const info = await stat(dir).catch(() => undefined);
      if (!info) throw new ConfigurationError(`${dir} does not exist.`);
      const files = info.isDirectory() ? await listDocuments(dir) : [resolve(dir)];
      if (files.length === 0) throw new ConfigurationError(`No documents to index under ${dir}.`);
      const progress = progressBar(io, files.length);
      const { summary, knowledgeBase } = await indexDocuments({ files, directory, progress });
      await knowledgeBase.close();
      progress.end();
      if (options.json) {
        io.stdout(`${JSON.stringify({ knowledgeBase: directory, ...summary }, null, 2)}\n`);
      } else {
        const style = styles(io);
        io.stdout(
          `${style.green('✔')} ${summary.indexed.length} indexed, ${summary.unchanged.length} unchanged, ${summary.failed.length} failed — ${summary.documents} documents, ${summary.chunks} chunks in ${directory}\n`,
        );
        for (const failure of summary.failed)
          io.stdout(`  ${style.red('✘')} ${failure.file}: ${failure.error}\n`);
      }
      environment.setExitCode(
        summary.failed.length > 0 && summary.indexed.length + summary.unchanged.length === 0
          ? ExitCode.failure
          : ExitCode.ok,
      );
    });

  rag
    .command('query')
    .description('Search a knowledge base and print the passages with their sources')
    .argument('<query>', 'what to look for')
    .option('--kb <path>', 'knowledge base directory')
    .option('--name <name>', 'configured knowledge base name', 'default')
    .option('-k, --top-k <n>', 'passages to show', Number, 5)
    .option('--json', 'print the hits as JSON')
    .action(async (query: string, options: KbOptions & { topK: number; json?: boolean }) => {
      const { io } = environment;
      const directory = knowledgeBaseDirectory(options, environment.config());
      const exists = await stat(resolve(directory, 'manifest.json')).catch(() => undefined);
      if (!exists) {
        throw new ConfigurationError(
          `No knowledge base at ${directory}: run \`quiver rag index <dir> --kb ${directory}\` first.`,
        );
      }
      const knowledgeBase = await KnowledgeBase.open({ directory, readOnly: true });
      try {
        const result = await knowledgeBase.search({ query, topK: options.topK });
        const hits = result.hits.map((hit) => ({
          source: hit.chunk.source,
          page: hit.chunk.page,
          headingPath: hit.chunk.headingPath,
          score: hit.score,
          text: hit.chunk.text,
        }));
        if (options.json) {
          io.stdout(`${JSON.stringify({ query, hits, warnings: result.warnings }, null, 2)}\n`);
        } else {
          printHits(environment, hits);
          for (const warning of result.warnings) io.stderr(`warning: ${warning}\n`);
        }
        environment.setExitCode(hits.length > 0 ? ExitCode.ok : ExitCode.failure);
      } finally {
        await knowledgeBase.close();
      }
    });
}

/** Print retrieval hits as numbered sources with a short excerpt. */
export function printHits(
  environment: Pick<CommandEnvironment, 'io'>,
  hits: { source: string; page?: number; headingPath?: string[]; score: number; text: string }[],
  log: (line: string) => void = (line) => environment.io.stdout(`${line}\n`),
): void {
  const style = styles(environment.io);
  if (hits.length === 0) log('(no passage found)');
  for (const [index, hit] of hits.entries()) {
    const where = [
      hit.source,
      hit.page ? `page ${hit.page}` : undefined,
      hit.headingPath?.length ? hit.headingPath.join(' › ') : undefined,
    ]
      .filter(Boolean)
      .join(', ');
    log(`${style.bold(`[${index + 1}]`)} ${where} ${style.dim(`(score ${hit.score.toFixed(3)})`)}`);
    log(`    ${hit.text.replace(/\s+/g, ' ').slice(0, 160)}…`);
  }
}
