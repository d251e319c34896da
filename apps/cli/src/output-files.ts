import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { ContentBlock } from '@quiver/core';
import type { QuiverConfig } from './config.js';

/** Where the CLI keeps files tools produce (charts): `workDir` of the config, else `<tmp>/quiver-outputs`. */
export function outputDirectory(config: Pick<QuiverConfig, 'workDir'>): string {
  return config.workDir !== undefined ? resolve(config.workDir) : join(tmpdir(), 'quiver-outputs');
}

/**
 * Keep an image a tool produced: kernels delete their work directories when they stop, so the
 * file is copied (or its inline data written) to `directory`. Returns the kept path.
 */
export async function keepImage(
  block: Extract<ContentBlock, { type: 'image' }>,
  directory: string,
): Promise<string | undefined> {
  await mkdir(directory, { recursive: true });
  const stamp = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  if (block.path) {
    const target = join(directory, `${stamp}-${basename(block.path)}`);
    try {
      await copyFile(block.path, target);
      return target;
    } catch {
      // The file is gone already: fall back to the inline data.
    }
  }
  if (block.data) {
    const extension = block.mimeType?.split('/')[1]?.replace('jpeg', 'jpg') ?? 'png';
    const target = join(directory, `${stamp}-image.${extension}`);
    await writeFile(target, Buffer.from(block.data, 'base64'));
    return target;
  }
  return undefined;
}
