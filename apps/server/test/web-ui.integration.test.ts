import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { PageCache } from '../src/index.js';
import { startTestServer } from './helpers.js';

// Screenshots are kept as test artifacts.
const shots = join(__dirname, '..', 'test-results', 'screenshots');
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let server: Awaited<ReturnType<typeof startTestServer>>;
let browser: Browser;
let page: Page;
let pages: PageCache;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  const file = join(mkdtempSync(join(tmpdir(), 'quiver-ui-pages-')), 'pages.json');
  const indexed = new Map<string, string>();
  pages = await PageCache.open(file, {
    fetch: async () => Promise.reject(new Error('offline in this test')),
    index: async (page) => {
      indexed.set(page.id, page.content);
    },
  });
  server = await startTestServer({ pages });
  browser = await chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('web UI', () => {
  it('says chat is off without a model and still lists the tools', async () => {
    const banner = page.locator('#banner');
    await expect(banner.isVisible()).resolves.toBe(true);
    expect(await banner.textContent()).toMatch(/Chat is off.*OPENAI_API_KEY/);
    expect(await page.locator('#send').isDisabled()).toBe(true);
    const names = await page.locator('#tool-list .name').allTextContents();
    expect(names).toEqual(expect.arrayContaining(['calculator', 'current_time', 'countdown']));
    await page.screenshot({ path: join(shots, 'no-model.png') });
  });

  it('runs a tool directly and shows the result in a card', async () => {
    await page.selectOption('#tool-select', 'calculator');
    await page.fill('#tool-args', '{"expression": "12 * 12"}');
    await page.click('#run-tool');
    const card = page.locator('#tool-results details.tool-card[data-status]').last();
    await card.waitFor();
    expect(await card.getAttribute('data-status')).toBe('ok');
    await card.locator('summary').click();
    expect(await card.locator('.card-body').textContent()).toContain(String(12 * 12));
    await page.screenshot({ path: join(shots, 'tool-run.png') });
  });

  it('shows a tool error in the card', async () => {
    await page.selectOption('#tool-select', 'calculator');
    await page.fill('#tool-args', '{"expr": "1"}');
    await page.click('#run-tool');
    const card = page.locator('#tool-results details.tool-card[data-status]').last();
    await page.waitForFunction(
      () => document.querySelectorAll('#tool-results details.tool-card[data-status]').length >= 2,
    );
    expect(await card.getAttribute('data-status')).toBe('error');
    expect(await card.locator('.card-body').textContent()).toMatch(/"expression": is required/);
  });

  it('streams a tool output into its card', async () => {
    await page.selectOption('#tool-select', 'countdown');
    await page.fill('#tool-args', '{"from": 3, "intervalMs": 20}');
    await page.click('#run-tool');
    await page.waitForFunction(
      () => document.querySelectorAll('#tool-results details.tool-card[data-status]').length >= 3,
    );
    const card = page.locator('#tool-results details.tool-card[data-status]').last();
    expect(await card.locator('.card-body').textContent()).toContain('liftoff');
  });

  it('shows the browsing history with selection checkboxes', async () => {
    const ready = await pages.add({
      url: 'https://example.org/owls',
      title: 'Owls',
      content: 'Owls hunt at night.',
    });
    await pages.settled(ready.id);
    const failed = await pages.add({ url: 'https://example.org/offline' });
    await pages.settled(failed.id);
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    const readyRow = page.locator(`#history li[data-page="${ready.id}"]`);
    expect(await readyRow.getAttribute('data-status')).toBe('ready');
    expect(
      await page.locator(`#history li[data-page="${failed.id}"]`).getAttribute('data-status'),
    ).toBe('failed');
    const box = readyRow.locator('input[type="checkbox"]');
    expect(await box.isChecked()).toBe(true);
    await box.uncheck();
    for (let attempt = 0; attempt < 100 && pages.get(ready.id)?.selected; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pages.get(ready.id)?.selected).toBe(false);
    await page.screenshot({ path: join(shots, 'history.png') });
  });

  it('toggles a tool group', async () => {
    server.toolkit.createGroup({ name: 'extra', description: 'More tools' });
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    const box = page.locator('input[data-group="extra"]');
    expect(await box.isChecked()).toBe(false);
    await box.check();
    await page.waitForFunction(
      () =>
        (document.querySelector('input[data-group="extra"]') as HTMLInputElement | null)
          ?.checked === true,
    );
    expect(server.toolkit.groups().find((group) => group.name === 'extra')?.active).toBe(true);
  });
});
