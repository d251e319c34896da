import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit } from '@quiver/core-registry';
import { exampleTools } from '@quiver/core-registry/examples';
import type { RunningServer, ServerOptions, ServerServices } from '../src/index.js';
import { startServer } from '../src/index.js';

/** A toolkit with the example tools. */
export function exampleToolkit(): Toolkit {
  const toolkit = new Toolkit();
  for (const tool of exampleTools) toolkit.register(tool);
  return toolkit;
}

/** Start a server on a free port of 127.0.0.1 with the example tools (or the given services). */
export async function startTestServer(
  services: Partial<ServerServices> = {},
  options: ServerOptions = {},
): Promise<RunningServer & { toolkit: Toolkit }> {
  const toolkit = services.toolkit ?? exampleToolkit();
  const server = await startServer(
    { ...services, toolkit },
    { port: 0, uploadDir: mkdtempSync(join(tmpdir(), 'quiver-server-test-')), ...options },
  );
  return Object.assign(server, { toolkit });
}

/** Read a server-sent event stream into [event, data] pairs. */
export async function readEvents(response: Response): Promise<{ event: string; data: any }[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      return { event, data: data.length ? JSON.parse(data.join('\n')) : undefined };
    });
}
