import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenAITestServer } from '@quiver/agent-loop/testing';
import { startOpenAITestServer } from '@quiver/agent-loop/testing';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { createQuiverServices } from '../src/index.js';
import { chatToolkit, scriptedBrain, startTestServer } from './helpers.js';

// The web UI with a model: agent-loop's OpenAI-compatible test server plays the model.
const shots = join(__dirname, '..', 'test-results', 'screenshots');
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let model: OpenAITestServer;
let server: Awaited<ReturnType<typeof startTestServer>>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  model = await startOpenAITestServer({ script: scriptedBrain });
  server = await startTestServer(
    await createQuiverServices({
      toolkit: chatToolkit(),
      model: { baseURL: model.baseURL, apiKey: 'test', model: 'test-model', env: {} },
    }),
  );
  browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await model?.close();
});

async function send(text: string) {
  await page.fill('#chat-input', text);
  await page.press('#chat-input', 'Enter');
}

describe('web UI chat with a model', () => {
  it('has no banner and an enabled send button', async () => {
    expect(await page.locator('#banner').isVisible()).toBe(false);
    expect(await page.locator('#send').isDisabled()).toBe(false);
  });

  it('streams the answer and shows the tool call as a card', async () => {
    await send('Please calculate 12 * 12');
    const card = page.locator('#messages details.tool-card[data-tool="calculator"][data-status]');
    await card.waitFor();
    expect(await card.getAttribute('data-status')).toBe('ok');
    await card.locator('summary').click();
    expect(await card.locator('.card-body').textContent()).toContain(String(12 * 12));
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('#messages .message.assistant')).some((node) =>
        node.textContent?.includes('The tool said: 144'),
      ),
    );
    await page.screenshot({ path: join(shots, 'chat-tool-card.png') });
  });

  it('asks for approval and runs the tool when approved', async () => {
    await send('delete my notes');
    const prompt = page.locator('#approvals .approval');
    await prompt.waitFor();
    expect(await prompt.locator('code').textContent()).toContain('remove_note');
    await page.screenshot({ path: join(shots, 'chat-approval.png') });
    await prompt.locator('button.approve').click();
    const card = page.locator('#messages details.tool-card[data-tool="remove_note"][data-status]');
    await card.waitFor();
    expect(await card.getAttribute('data-status')).toBe('ok');
    expect(await card.locator('.card-body').textContent()).toContain('removed notes.txt');
    expect(await page.locator('#approvals').isVisible()).toBe(false);
  });

  it('does not run the tool when rejected, and the model hears why', async () => {
    await send('delete my notes again');
    const prompt = page.locator('#approvals .approval');
    await prompt.waitFor();
    await prompt.locator('button.reject').click();
    await page.waitForFunction(
      () =>
        document.querySelectorAll(
          '#messages details.tool-card[data-tool="remove_note"][data-status="error"]',
        ).length === 1,
    );
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('#messages .message.assistant')).some((node) =>
        node.textContent?.includes('rejected'),
      ),
    );
    await page.screenshot({ path: join(shots, 'chat-rejected.png') });
  });

  it('feeds an uploaded file to the Assistant', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quiver-ui-upload-'));
    const file = join(dir, 'wildlife.md');
    writeFileSync(
      file,
      '# Wildlife notes\n\nThe quokka lives on Rottnest Island near Perth.\n\n# Birds\n\nThe emu cannot fly.\n',
    );
    await page.setInputFiles('#file-input', file);
    await page.locator('#attachments .chip[data-path]').waitFor();
    await send('What does the document say about quokkas?');
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('#messages .message.assistant')).some((node) =>
        node.textContent?.includes('Rottnest Island'),
      ),
    );
    expect(await page.locator('#messages .message.note').last().textContent()).toContain(
      'wildlife.md',
    );
    await page.screenshot({ path: join(shots, 'chat-upload.png') });
  });
});
