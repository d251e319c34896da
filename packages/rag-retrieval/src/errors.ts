import { QuiverError } from '@quiver/core';

/** Stable codes of the errors this package raises. */
export const RetrievalErrorCodes = {
  indexCorrupted: 'retrieval_index_corrupted',
  embedderMismatch: 'retrieval_embedder_mismatch',
  unsupportedVersion: 'retrieval_unsupported_version',
  knowledgeBaseLocked: 'retrieval_knowledge_base_locked',
  embeddingFailed: 'retrieval_embedding_failed',
  invalidQuery: 'retrieval_invalid_query',
} as const;

/**
 * A knowledge base on disk failed its integrity check (a missing file, a checksum that does not
 * match, a file that does not parse). The previous state is never overwritten in place, so this
 * means the files were changed outside Quiver or the disk failed.
 * Recover with `KnowledgeBase.rebuild(directory, …)` which re-indexes from the chunk store when it is intact,
 * or delete the directory and index the documents again.
 */
export class IndexCorruptedError extends QuiverError {
  /** The knowledge base directory. */
  readonly directory: string;
  /** The file that failed the check. */
  readonly file: string;

  constructor(directory: string, file: string, detail: string, options?: { cause?: unknown }) {
    super(
      RetrievalErrorCodes.indexCorrupted,
      `Knowledge base "${directory}" is corrupted: ${file} ${detail}. ` +
        'Call KnowledgeBase.rebuild() to rebuild the indexes from the chunk store, or delete the directory and index the documents again.',
      options,
    );
    this.directory = directory;
    this.file = file;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), directory: this.directory, file: this.file };
  }
}

/**
 * A knowledge base was opened with an embedder other than the one that built it (different model
 * id or vector length). Vectors from two models cannot be compared.
 */
export class EmbedderMismatchError extends QuiverError {
  readonly expected: { id: string; dimensions: number };
  readonly actual: { id: string; dimensions: number | undefined };

  constructor(
    directory: string,
    expected: { id: string; dimensions: number },
    actual: { id: string; dimensions: number | undefined },
  ) {
    super(
      RetrievalErrorCodes.embedderMismatch,
      `Knowledge base "${directory}" was built with embedder "${expected.id}" (${expected.dimensions} dimensions) ` +
        `but was opened with "${actual.id}" (${actual.dimensions ?? 'unknown'} dimensions). ` +
        'Open it with the same embedder, or pass `reindex: true` to re-embed every chunk with the new one.',
    );
    this.expected = expected;
    this.actual = actual;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), expected: this.expected, actual: this.actual };
  }
}

/** A knowledge base was written by a newer, incompatible version of this package. */
export class UnsupportedVersionError extends QuiverError {
  readonly version: number;

  constructor(directory: string, version: number, supported: number) {
    super(
      RetrievalErrorCodes.unsupportedVersion,
      `Knowledge base "${directory}" has format version ${version}; this version of @quiver/rag-retrieval reads versions up to ${supported}. Upgrade @quiver/rag-retrieval.`,
    );
    this.version = version;
  }
}

/** Another live process holds the knowledge base's write lock. */
export class KnowledgeBaseLockedError extends QuiverError {
  readonly holderPid: number | undefined;

  constructor(directory: string, holderPid: number | undefined) {
    super(
      RetrievalErrorCodes.knowledgeBaseLocked,
      `Knowledge base "${directory}" is being written by another process${holderPid ? ` (pid ${holderPid})` : ''}. ` +
        'Open it with `readOnly: true` to search it, or wait until the writer closes it.',
    );
    this.holderPid = holderPid;
  }
}

/** The embedding service failed after its retries. `isRetryable` marks transient failures. */
export class EmbeddingError extends QuiverError {
  readonly statusCode: number | undefined;
  readonly isRetryable: boolean;

  constructor(
    message: string,
    options?: { cause?: unknown; statusCode?: number; isRetryable?: boolean },
  ) {
    super(RetrievalErrorCodes.embeddingFailed, message, options);
    this.statusCode = options?.statusCode;
    this.isRetryable = options?.isRetryable ?? false;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), statusCode: this.statusCode, isRetryable: this.isRetryable };
  }
}

/** A search query that cannot be searched: empty, or only whitespace. A caller mistake. */
export class InvalidQueryError extends QuiverError {
  constructor(message: string) {
    super(RetrievalErrorCodes.invalidQuery, message);
  }
}
