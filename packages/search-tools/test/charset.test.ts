import { describe, expect, it } from '@jest/globals';
import iconv from 'iconv-lite';
import {
  charsetFromContentType,
  charsetFromMarkup,
  decodeBody,
  normalizeCharset,
} from '../src/index.js';
import { fixture } from './helpers/fixture-server.js';

const GBK_PAGE = fixture('pages', 'qq-deepmind-gbk.html');
const SNIPPET =
  '这款产品具有极其重要的意义，因为这意味着未来的人工智能技术可能不需要人类来教它就能回答人类提出的问题。';

describe('charset detection', () => {
  it('the GBK fixture really is GBK, not UTF-8', () => {
    expect(GBK_PAGE.toString('utf8')).not.toContain(SNIPPET);
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(GBK_PAGE)).toThrow();
  });

  it('decodes a GBK page declared in the Content-Type header', () => {
    const decoded = decodeBody(GBK_PAGE, 'text/html; charset=GBK');
    expect(decoded).toMatchObject({ charset: 'gb18030', source: 'header' });
    expect(decoded.text).toContain(SNIPPET);
  });

  it('decodes a GBK page declared only by <meta http-equiv> (gb2312 label)', () => {
    const decoded = decodeBody(GBK_PAGE, 'text/html');
    expect(decoded).toMatchObject({ charset: 'gb18030', source: 'meta' });
    expect(decoded.text).toContain('DeepMind新电脑已可利用记忆自学');
  });

  it('detects an undeclared GBK page from its bytes', () => {
    const undeclared = Buffer.from(
      GBK_PAGE.toString('latin1').replace(/<meta http-equiv="Content-Type"[^>]*>/i, ''),
      'latin1',
    );
    expect(charsetFromMarkup(undeclared)).toBeUndefined();
    const decoded = decodeBody(undeclared);
    expect(decoded.source).toBe('detected');
    expect(decoded.text).toContain(SNIPPET);
  });

  it('prefers a BOM, then the header, then <meta charset>', () => {
    const bom = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('<meta charset="gbk">héllo', 'utf8'),
    ]);
    expect(decodeBody(bom, 'text/html; charset=gbk')).toMatchObject({
      text: '<meta charset="gbk">héllo',
      source: 'bom',
    });
    const shiftJis = iconv.encode('<meta charset="shift_jis"><p>日本語のテキスト</p>', 'shift_jis');
    expect(decodeBody(shiftJis).text).toContain('日本語のテキスト');
    const latin = iconv.encode('<p>café déjà vu</p>', 'windows-1252');
    expect(decodeBody(latin, 'text/html; charset=iso-8859-1').text).toBe('<p>café déjà vu</p>');
  });

  it('treats valid UTF-8 as UTF-8 even when cut in the middle of a character', () => {
    const bytes = Buffer.from('中文字符', 'utf8').subarray(0, 10);
    expect(decodeBody(bytes).source).toBe('utf8-valid');
  });

  it('normalises WHATWG labels and ignores unknown ones', () => {
    expect(normalizeCharset('GB2312')).toBe('gb18030');
    expect(normalizeCharset('"UTF8"')).toBe('utf-8');
    expect(normalizeCharset('latin1')).toBe('windows-1252');
    expect(normalizeCharset('x-no-such-charset')).toBeUndefined();
    expect(charsetFromContentType('text/html; charset="Big5"')).toBe('Big5');
  });
});
