import type { ChatMessage, Language, RetrievedChunk, Retriever } from '@quiver/core';
import { errorMessage, messageText } from '@quiver/core';
import { decode, encode } from 'gpt-tokenizer';
import type { RunSession } from './agent.js';
import type { AgentEvent } from './agent-events.js';
import type { FnCallAgentOptions } from './fn-call-agent.js';
import { FnCallAgent } from './fn-call-agent.js';
import { appendToSystemMessage } from './system-message.js';
import type { TokenCounter } from './token-counter.js';
import { defaultTokenCounter } from './token-counter.js';

/** Options of {@link Assistant}. */
export interface AssistantOptions extends FnCallAgentOptions {
  /** Where knowledge comes from (e.g. `@quiver/rag-retrieval`'s retriever). */
  retriever?: Retriever;
  /** Token budget of the knowledge put into the system message. Default 4000. */
  maxRefTokens?: number;
  /** Passages to ask the retriever for. Default: the retriever's own default. */
  topK?: number;
  /** Files every run searches besides those attached to messages. */
  files?: string[];
  /** Retrieve even when no file is attached (for a retriever over a prebuilt index). Default false. */
  alwaysRetrieve?: boolean;
}

const TEMPLATES = {
  en: {
    heading: '# Knowledge Base',
    instruction:
      'Answer with the help of the excerpts below when they are relevant. Cite the excerpts you use by their numbers, like [1]. If they do not contain the answer, say so and answer from what you know.',
    snippet: (index: number, where: string, text: string) =>
      `## [${index}] From ${where}:\n\n\`\`\`\n${text}\n\`\`\``,
    page: (page: number) => `, page ${page}`,
  },
  zh: {
    heading: '# 知识库',
    instruction:
      '请参考以下资料回答问题，并用编号（如 [1]）标注你引用的资料。若资料中没有答案，请说明，再根据你已知的内容回答。',
    snippet: (index: number, where: string, text: string) =>
      `## [${index}] 来自 ${where} 的内容：\n\n\`\`\`\n${text}\n\`\`\``,
    page: (page: number) => ` 第 ${page} 页`,
  },
} as const;

/**
 * Build the knowledge section of a system message from retrieved passages, numbered for
 * citation, within a token budget (passages in the order given; the one that crosses the budget
 * is cut at a token boundary, later ones are left out).
 *
 * @param chunks - passages, best first
 * @param options - language, budget, counter
 * @returns the text and the passages it cites (empty text when there are none)
 */
export function formatKnowledge(
  chunks: readonly RetrievedChunk[],
  options: { language?: Language; maxTokens?: number; counter?: TokenCounter } = {},
): { text: string; chunks: RetrievedChunk[] } {
  const template = TEMPLATES[options.language ?? 'en'];
  const counter = options.counter ?? defaultTokenCounter;
  let budget = options.maxTokens ?? 4000;
  const used: RetrievedChunk[] = [];
  const sections: string[] = [];
  for (const chunk of chunks) {
    if (budget <= 0) break;
    let text = chunk.text.trim();
    if (text === '') continue;
    const tokens = counter(text);
    if (tokens > budget) {
      // Only worth including when a meaningful piece fits.
      if (budget < 32) break;
      text = `${decode(encode(text).slice(0, budget)).trimEnd()} …`;
    }
    budget -= Math.min(tokens, budget);
    used.push(chunk);
    const where = `${chunk.source}${chunk.page !== undefined ? template.page(chunk.page) : ''}${
      chunk.headingPath && chunk.headingPath.length > 0 ? ` — ${chunk.headingPath.join(' > ')}` : ''
    }`;
    sections.push(template.snippet(used.length, where, text));
  }
  if (sections.length === 0) return { text: '', chunks: [] };
  return { text: [template.heading, template.instruction, ...sections].join('\n\n'), chunks: used };
}

/**
 * A function-calling agent with retrieval (Qwen-Agent's `Assistant`): before the first model
 * call, the files attached to user messages (file parts with a path or URL) and the agent's own
 * `files` go to the {@link Retriever} with the latest user question; what it finds is added to
 * the system message, numbered for citation, within `maxRefTokens`. When retrieval fails the
 * run goes on as a plain chat and the failure is logged as a warning.
 *
 * @example
 * ```ts
 * const assistant = new Assistant({ model, retriever });
 * const result = await assistant.run([{ role: 'user', content: [
 *   { type: 'text', text: 'What does the report say about revenue?' },
 *   { type: 'file', file: { path: './report.pdf' } },
 * ] }]).final();
 * ```
 */
export class Assistant extends FnCallAgent {
  readonly retriever: Retriever | undefined;
  readonly maxRefTokens: number;
  readonly #topK: number | undefined;
  readonly #files: string[];
  readonly #alwaysRetrieve: boolean;
  readonly #counter: TokenCounter;

  constructor(options: AssistantOptions) {
    super(options);
    this.retriever = options.retriever;
    this.maxRefTokens = options.maxRefTokens ?? 4000;
    this.#topK = options.topK;
    this.#files = options.files ?? [];
    this.#alwaysRetrieve = options.alwaysRetrieve ?? false;
    this.#counter = options.tokenCounter ?? defaultTokenCounter;
  }

  protected override async *prepare(
    session: RunSession,
  ): AsyncGenerator<AgentEvent, void, undefined> {
    const retriever = this.retriever;
    if (!retriever) return;
    const files = [...new Set([...this.#files, ...session.files])];
    if (files.length === 0 && !this.#alwaysRetrieve) return;
    const query = latestQuestion(session.conversation);
    if (query === '') return;
    let found;
    try {
      found = await retriever.retrieve({
        query,
        ...(files.length > 0 ? { files } : {}),
        maxTokens: this.maxRefTokens,
        ...(this.#topK !== undefined ? { topK: this.#topK } : {}),
        signal: session.signal,
      });
    } catch (error) {
      if (session.signal.aborted) return;
      this.logger.warn('retrieval failed; answering without the documents', {
        error: errorMessage(error),
        files,
      });
      yield {
        type: 'retrieval',
        runId: session.runId,
        chunks: [],
        warnings: [],
        error: errorMessage(error),
      };
      return;
    }
    for (const warning of found.warnings) this.logger.warn(`retrieval: ${warning}`, { files });
    const knowledge = formatKnowledge(found.chunks, {
      language: session.language,
      maxTokens: this.maxRefTokens,
      counter: this.#counter,
    });
    if (knowledge.text !== '')
      session.conversation = appendToSystemMessage(session.conversation, knowledge.text);
    yield {
      type: 'retrieval',
      runId: session.runId,
      chunks: knowledge.chunks,
      warnings: found.warnings,
    };
  }
}

function latestQuestion(messages: readonly ChatMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === 'user') return messageText(message).trim();
  }
  return '';
}
