import { expect } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { responseText, toolResponseSchema } from '@quiver/core';
import { z } from 'zod';
import { Toolkit, defineTool } from '../src/index.js';
import type { ToolSpec, ToolkitOptions } from '../src/index.js';

type NoArguments = Record<string, never>;

/** A tool without parameters, for tests that care only about what it does when called. */
export function bareTool(
  name: string,
  execute: ToolSpec<NoArguments>['execute'],
  options: { description?: string; timeoutMs?: number } = {},
) {
  return defineTool({
    name,
    description: options.description ?? 'd',
    parameters: z.object({}),
    execute,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
}

/** A Toolkit holding these tools. */
export function toolkitWith(
  tools: readonly ReturnType<typeof bareTool>[],
  options?: ToolkitOptions,
): Toolkit {
  const toolkit = new Toolkit(options);
  for (const tool of tools) toolkit.register(tool);
  return toolkit;
}

/** A call of a tool without arguments, with id `call-<name>`. */
export const call = (name: string) => ({ id: `call-${name}`, name, arguments: '{}' });

/** Read a whole stream. */
export async function collect(stream: AsyncIterable<ToolResponse>): Promise<ToolResponse[]> {
  const chunks: ToolResponse[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/**
 * The stream invariants every call must keep: each chunk is a valid ToolResponse, there is at
 * least one, and exactly one is marked `isLast` — the final one.
 */
export function expectWellFormed(chunks: readonly ToolResponse[]): void {
  expect(chunks.length).toBeGreaterThan(0);
  for (const chunk of chunks) expect(toolResponseSchema.safeParse(chunk).success).toBe(true);
  const lastIndexes = chunks.flatMap((chunk, index) => (chunk.isLast === true ? [index] : []));
  expect(lastIndexes).toEqual([chunks.length - 1]);
}

/** The final chunk of a stream, checked for well-formedness first. */
export function finalChunk(chunks: readonly ToolResponse[]): ToolResponse {
  expectWellFormed(chunks);
  return chunks[chunks.length - 1]!;
}

/** The structured error of an error response. */
export function errorOf(response: ToolResponse): Record<string, unknown> {
  expect(response.isError).toBe(true);
  const error = response.metadata?.error;
  expect(error).toBeDefined();
  return error as Record<string, unknown>;
}

/** Text of all chunks, joined. */
export function textOf(chunks: readonly ToolResponse[] | ToolResponse): string {
  const list = Array.isArray(chunks) ? chunks : [chunks as ToolResponse];
  return list.map((chunk) => responseText(chunk)).join('');
}

/** Wait for `ms` milliseconds (short waits only; never asserted on). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A deterministic PRNG (mulberry32), so fuzz runs are reproducible from their seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
