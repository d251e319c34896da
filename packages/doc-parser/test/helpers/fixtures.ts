import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Directory of the copied dev set (see test/fixtures/README.md). */
export const DEV_SET = join(__dirname, '..', 'fixtures', 'dev-set');

export interface ManifestFile {
  file: string;
  format: string;
  snippets: string[];
  features: string[];
}

export const manifest = JSON.parse(readFileSync(join(DEV_SET, 'manifest.json'), 'utf8')) as {
  files: ManifestFile[];
};

/** The manifest's match rule: NFC, whitespace runs collapsed to one space, trimmed. */
export const norm = (text: string): string => text.normalize('NFC').replace(/\s+/g, ' ').trim();

export const devFile = (name: string): string => join(DEV_SET, name);

export const devBytes = (name: string): Buffer => readFileSync(devFile(name));

/** A fresh temporary directory. */
export const temporaryDirectory = (prefix = 'quiver-doc-parser-'): string =>
  mkdtempSync(join(tmpdir(), prefix));
