import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenAITestServer } from '@quiver/agent-loop/testing';
import { startOpenAITestServer } from '@quiver/agent-loop/testing';
import { createQuiverServices } from '../src/index.js';
import type { ServerServices } from '../src/index.js';
import {
  chatToolkit,
  readEvents,
  scriptedBrain,
  startTestServer,
  watchForever,
} from './helpers.js';

let model: OpenAITestServer;
let server: Awaited<ReturnType<typeof startTestServer>>;
let services: ServerServices;

beforeAll(async () => {
  model = await startOpenAITestServer({ script: scriptedBrain });
  services = await createQuiverServices({
    toolkit: chatToolkit(),
    dataDir: mkdtempSync(join(tmpdir(), 'quiver-chat-data-')),
    model: { baseURL: model.baseURL, apiKey: 'test', model: 'test-model', env: {} },
  });
  server = await startTestServer(services);
});
afterAll(async () => {
  await server?.close();
  await model?.close();
});

const chat = (body: unknown) =>
  fetch(`${server.url}/v1/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('/v1/chat on the agent loop', () => {
  it('says chat is available', async () => {
    const info = (await (await fetch(`${server.url}/v1/info`)).json()) as {
      chat: { available: boolean };
      mcp: boolean;
      knowledgeBases: boolean;
    };
    expect(info.chat.available).toBe(true);
    expect(info.mcp).toBe(true);
    expect(info.knowledgeBases).toBe(true);
  });

  it('streams text, the tool call and its result, then the whole conversation', async () => {
    const messages = [{ role: 'user', content: 'Please calculate 12 * 12' }];
    const events = await readEvents(await chat({ messages }));
    const kinds = events.map((event) => event.event);
    expect(kinds).toEqual(
      expect.arrayContaining(['text-delta', 'tool-start', 'tool-end', 'messages', 'done']),
    );
    expect(kinds.indexOf('tool-start')).toBeLessThan(kinds.indexOf('tool-end'));
    const start = events.find((event) => event.event === 'tool-start')!.data;
    const end = events.find((event) => event.event === 'tool-end')!.data;
    expect(start).toMatchObject({ name: 'calculator' });
    expect(end.id).toBe(start.id);
    expect(end.response.content[0].text).toBe(String(12 * 12));
    const streamed = events
      .filter((event) => event.event === 'text-delta')
      .map((event) => event.data.text)
      .join('');
    expect(streamed).toContain(`The tool said: ${12 * 12}`);
    const history = events.find((event) => event.event === 'messages')!.data.messages;
    expect(history[0]).toEqual(messages[0]);
    expect(history.map((message: { role: string }) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
  });

  it('pauses for approval with a signed state, and resumes on approve or reject', async () => {
    const messages = [{ role: 'user', content: 'delete my notes' }];
    const paused = await readEvents(await chat({ messages }));
    const approval = paused.find((event) => event.event === 'approval-required')!.data;
    expect(approval.pending).toEqual([
      expect.objectContaining({ name: 'remove_note', arguments: '{"name":"notes.txt"}' }),
    ]);
    expect(paused.some((event) => event.event === 'tool-start')).toBe(false);
    const toolCallId = approval.pending[0].toolCallId as string;

    const approved = await readEvents(
      await chat({
        messages,
        resume: { state: approval.state, decisions: [{ toolCallId, approved: true }] },
      }),
    );
    const ran = approved.find((event) => event.event === 'tool-end')!.data;
    expect(ran.response.content[0].text).toBe('removed notes.txt');

    const rejected = await readEvents(
      await chat({
        messages,
        resume: { state: approval.state, decisions: [{ toolCallId, approved: false }] },
      }),
    );
    const refused = rejected.find((event) => event.event === 'tool-end')!.data;
    expect(refused.response.metadata.rejected).toBe(true);
    expect(JSON.stringify(rejected)).not.toContain('removed notes.txt');
    const history = rejected.find((event) => event.event === 'messages')!.data.messages;
    const toolMessage = history.find((message: { role: string }) => message.role === 'tool');
    expect(JSON.stringify(toolMessage.content)).toMatch(/reject/i);
  });

  it('refuses a run state it did not issue', async () => {
    const messages = [{ role: 'user', content: 'delete my notes' }];
    const paused = await readEvents(await chat({ messages }));
    const approval = paused.find((event) => event.event === 'approval-required')!.data;
    const forged = structuredClone(approval.state);
    forged.data.pendingCalls[0].arguments = '{"name":"/etc/passwd"}';
    const events = await readEvents(
      await chat({
        messages,
        resume: {
          state: forged,
          decisions: [{ toolCallId: approval.pending[0].toolCallId, approved: true }],
        },
      }),
    );
    expect(events.find((event) => event.event === 'error')!.data.message).toMatch(
      /not one this server issued/,
    );
    expect(events.some((event) => event.event === 'tool-start')).toBe(false);
  });

  it('answers from an uploaded file (the Assistant retrieves from it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quiver-chat-upload-'));
    const file = join(dir, 'animals.md');
    writeFileSync(
      file,
      '# Animals of Western Australia\n\nThe quokka lives on Rottnest Island and is famously photogenic.\n\n# Birds\n\nThe emu cannot fly.\n',
    );
    const form = new FormData();
    form.append(
      'file',
      new Blob([await import('node:fs').then((fs) => fs.readFileSync(file))]),
      'animals.md',
    );
    const uploaded = (await (
      await fetch(`${server.url}/v1/files`, { method: 'POST', body: form })
    ).json()) as { path: string };
    const events = await readEvents(
      await chat({
        messages: [{ role: 'user', content: 'What does the document say about quokkas?' }],
        files: [uploaded.path],
      }),
    );
    const retrieval = events.find((event) => event.event === 'retrieval')!.data;
    expect(retrieval.sources[0].source).toBe(uploaded.path);
    const answer = events
      .filter((event) => event.event === 'text-delta')
      .map((event) => event.data.text)
      .join('');
    expect(answer).toContain('The quokka lives on Rottnest Island');
  });

  it('answers from the browsing-history pages the user selected, and only while selected', async () => {
    const pages = services.pages!;
    const page = await pages.add({
      url: 'https://example.org/birds/kiwi',
      title: 'Kiwi',
      content: '# Kiwi\n\nThe kiwi is a flightless bird that lives only in New Zealand.\n',
    });
    await pages.settled(page.id);
    expect(pages.get(page.id)).toMatchObject({ status: 'ready', selected: true });
    const ask = async () => {
      const events = await readEvents(
        await chat({
          messages: [{ role: 'user', content: 'What does the document say about kiwis?' }],
        }),
      );
      return {
        sources: events.find((event) => event.event === 'retrieval')?.data.sources ?? [],
        answer: events
          .filter((event) => event.event === 'text-delta')
          .map((event) => event.data.text)
          .join(''),
      };
    };
    const selected = await ask();
    expect(selected.sources[0].source).toBe('https://example.org/birds/kiwi');
    expect(selected.answer).toContain('lives only in New Zealand');
    await pages.setSelected(page.id, false);
    const unselected = await ask();
    expect(unselected.sources).toEqual([]);
    expect(unselected.answer).toBe('I found nothing in the files.');
  });

  it('stops the run and its tool when the client disconnects mid-stream', async () => {
    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'watch forever' }] }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('event: tool-chunk')) {
      const { value } = await reader.read();
      seen += new TextDecoder().decode(value);
    }
    expect(watchForever.started).toBe(1);
    controller.abort();
    for (let attempt = 0; attempt < 200 && watchForever.aborted === 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(watchForever.aborted).toBe(1);
  });

  it('rejects a malformed chat body with 400', async () => {
    const response = await chat({ messages: [] });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /messages/,
    );
  });
});
