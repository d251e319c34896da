import { createRequire } from 'node:module';
import { join } from 'node:path';

/** The bundled sample documents (apps/cli/assets/sample-docs, next to src/ and dist/). */
export function sampleDocumentsDirectory(): string {
  return join(__dirname, '..', 'assets', 'sample-docs');
}

/** Entry point of the bundled MCP reference server (`@modelcontextprotocol/server-everything`). */
export function everythingServerPath(): string {
  const require = createRequire(__filename);
  return join(
    require
      .resolve('@modelcontextprotocol/server-everything/package.json')
      .replace(/package\.json$/, ''),
    'dist',
    'index.js',
  );
}
