import { describe, expect, it } from '@jest/globals';
import type { ToolResponse } from '@quiver/core';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import type { QualityRule } from '../src/index.js';
import {
  DEFAULT_QUALITY_RULE_DATA,
  builtinQualityRules,
  governanceOf,
  resultQuality,
} from '../src/index.js';
import { call, recordingLogger } from './helpers.js';

/** A toolkit whose tools return whatever the test puts in `results[name]`. */
function scripted(names: string[]) {
  const results: Record<string, unknown> = {};
  const toolkit = new Toolkit();
  for (const name of names) {
    toolkit.register(
      defineTool({
        name,
        description: name,
        parameters: z.object({}).passthrough(),
        execute: () => results[name],
      }),
    );
  }
  return { toolkit, results };
}

async function verdict(
  tool: string,
  result: unknown,
  options: Parameters<typeof resultQuality>[0] = {},
): Promise<string | undefined> {
  const { toolkit, results } = scripted([tool]);
  results[tool] = result;
  toolkit.use(resultQuality(options));
  return (await call(toolkit, tool, {})).metadata?.rollback?.reason;
}

describe('built-in quality rules', () => {
  it('documents every rule', () => {
    const rules = builtinQualityRules();
    expect(rules.map((rule) => rule.name)).toEqual([
      'unknown_tool',
      'error_text',
      'empty_search_results',
      'empty_page',
      'blocked_page',
    ]);
    for (const rule of rules) expect(rule.description.length).toBeGreaterThan(20);
  });

  it('unknown_tool: a call to a tool that does not exist', async () => {
    const { toolkit } = scripted([]);
    toolkit.use(resultQuality());
    const response = await call(toolkit, 'web_serch', {});
    expect(response.isError).toBe(true);
    expect(response.metadata?.rollback?.reason).toBe('the tool "web_serch" does not exist');
  });

  it('error_text: a successful result that is an error message', async () => {
    expect(await verdict('calc', 'Error: division by zero')).toMatch(
      /error message: Error: division by zero/,
    );
    expect(await verdict('calc', 'Traceback (most recent call last):\n  File "x.py"')).toMatch(
      /error message/,
    );
    expect(await verdict('calc', { error: 'quota exceeded' })).toMatch(/error message/);
    expect(await verdict('calc', '错误：参数无效')).toMatch(/error message/);
    expect(await verdict('calc', 'The error rate fell to 2% in May.')).toBeUndefined();
    expect(await verdict('calc', `Error: ${'x'.repeat(3000)}`)).toBeUndefined(); // long results are content
  });

  it('empty_search_results: search tools only', async () => {
    for (const empty of [
      '',
      'No results found.',
      'No search results found for "xyz"',
      '[]',
      '没有找到相关结果',
      { results: [] },
      '{"items": [], "total": 0}',
    ]) {
      expect(await verdict('web_search', empty)).toBe('the search returned no results');
    }
    expect(
      await verdict(
        'web_search',
        'No results found? Here are 3 similar pages: a, b, c, and many more details that make this long enough to be real content with actual hits in it',
      ),
    ).toBeUndefined();
    expect(await verdict('web_search', { results: [{ title: 'a' }] })).toBeUndefined();
    expect(await verdict('calculator', '')).toBeUndefined(); // not a search tool
    expect(await verdict('finder', [], { kinds: { finder: 'search' } })).toBe(
      'the search returned no results',
    );
    expect(await verdict('web_search', [], { kinds: { web_search: null } })).toBeUndefined();
  });

  it('empty_page: page readers with (almost) no text', async () => {
    expect(await verdict('web_fetch', '   \n  ')).toBe('the page has no readable text');
    expect(await verdict('web_fetch', '<html></html>')).toBe('the page has no readable text');
    expect(
      await verdict(
        'web_fetch',
        'A real page with a paragraph of readable text about something useful.',
      ),
    ).toBeUndefined();
  });

  it('blocked_page: captcha and access-denied pages', async () => {
    const blocked =
      'Checking your browser before accessing example.com. Please enable JavaScript and cookies to continue. Completing the CAPTCHA proves you are a human.';
    expect(await verdict('web_fetch', blocked)).toMatch(/captcha or access-denied/);
    expect(
      await verdict(
        'browse_page',
        "Access Denied. You don't have permission to access this resource on this server.",
      ),
    ).toMatch(/captcha/);
    expect(
      await verdict(
        'web_fetch',
        '请完成安全验证后继续访问本页面，这是一个足够长的页面文本用来测试阻止页面规则的检测',
      ),
    ).toMatch(/captcha/);
    // A long article that merely mentions captchas is content.
    expect(
      await verdict('web_fetch', `How CAPTCHA works. ${'Real article text. '.repeat(300)}`),
    ).toBeUndefined();
  });

  it('is data-driven: tuned data changes what fires', async () => {
    const data = {
      ...DEFAULT_QUALITY_RULE_DATA,
      emptySearchPatterns: [...DEFAULT_QUALITY_RULE_DATA.emptySearchPatterns, /^Keine Ergebnisse/],
    };
    expect(await verdict('web_search', 'Keine Ergebnisse gefunden')).toBeUndefined();
    expect(
      await verdict('web_search', 'Keine Ergebnisse gefunden', {
        rules: builtinQualityRules(data),
      }),
    ).toBe('the search returned no results');
  });
});

describe('resultQuality middleware', () => {
  it('logs and ignores a rule that throws; later rules still run', async () => {
    const logger = recordingLogger();
    const broken: QualityRule = {
      name: 'broken',
      description: 'throws',
      check: () => {
        throw new Error('bad rule');
      },
    };
    const reason = await verdict('web_search', 'No results found', {
      logger,
      rules: [broken, ...builtinQualityRules()],
    });
    expect(reason).toBe('the search returned no results');
    expect(logger.entries).toEqual([
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ rule: 'broken', error: 'bad rule' }),
      }),
    ]);
  });

  it('bounds consecutive rollbacks per namespace, and a good result resets the streak', async () => {
    const { toolkit, results } = scripted(['web_search']);
    const quality = resultQuality({ maxConsecutiveRollbacks: 2 });
    toolkit.use(quality);
    results.web_search = 'No results found';
    const reasons: (string | undefined)[] = [];
    const suppressed: (string | undefined)[] = [];
    for (let index = 0; index < 4; index++) {
      const response: ToolResponse = await call(toolkit, 'web_search', { n: index });
      reasons.push(response.metadata?.rollback?.reason);
      suppressed.push(governanceOf(response).rollbackSuppressed);
    }
    expect(reasons).toEqual([
      'the search returned no results',
      'the search returned no results',
      undefined,
      'the search returned no results',
    ]);
    expect(suppressed).toEqual([undefined, undefined, 'the search returned no results', undefined]);
    expect(quality.consecutiveRollbacks()).toBe(1);
    // Another namespace has its own streak.
    expect(
      (await call(toolkit, 'web_search', {}, { namespace: 'sub' })).metadata?.rollback,
    ).toBeDefined();
    expect(quality.consecutiveRollbacks('sub')).toBe(1);
    results.web_search = 'Result 1: a real hit';
    await call(toolkit, 'web_search', {});
    expect(quality.consecutiveRollbacks()).toBe(0);
  });
});
