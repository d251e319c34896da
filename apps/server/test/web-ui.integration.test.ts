import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { startTestServer } from './helpers.js';

// Screenshots are kept as test artifacts.
const shots = join(__dirname, '..', 'test-results', 'screenshots');
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let server: Awaited<ReturnType<typeof startTestServer>>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  server = await startTestServer();
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
