export { chunkDocument, type ChunkDocumentOptions } from './chunk-document.js';
export { detectFormat, type FormatDetection } from './detect-format.js';
export {
  createDocParserTool,
  createSimpleDocParserTool,
  docParserTool,
  simpleDocParserTool,
  type DocParserToolOptions,
} from './doc-parser-tools.js';
export { QuiverDocumentParser } from './document-parser.js';
export {
  DocumentParseError,
  DocumentParseErrorCodes,
  type DocumentParseErrorCode,
} from './errors.js';
export { parseDocument } from './parse-document.js';
export { DEFAULT_PARSE_LIMITS, type ParseDocumentOptions } from './parse-options.js';
export { countTokens } from './tokenizer.js';
