import type { DocumentPage } from '@quiver/core';

/** @internal What each format parser returns; `parseDocument` adds text, tokens and common metadata. */
export interface FormatResult {
  pages: DocumentPage[];
  /** The document's own title (metadata or first heading), when it has one. */
  title: string | undefined;
  metadata: Record<string, unknown>;
  /** Things the caller should know (rows cut, scanned pages, pages dropped). */
  warnings?: string[];
}
