import { describe, expect, it } from '@jest/globals';
import { InvalidSignatureError } from '../src/errors.js';
import {
  MessageSigner,
  decodeMessage,
  encodeMessage,
  verifyFrames,
} from '../src/jupyter-protocol.js';

const signer = new MessageSigner('a-secret-key');

function frames() {
  return encodeMessage(
    { msgType: 'execute_request', content: { code: '1+1' }, session: 's1' },
    signer,
  );
}

describe('Jupyter wire protocol', () => {
  it('signs with HMAC-SHA256 over header, parent, metadata and content, and decodes back', () => {
    const { frames: wire, header } = frames();
    expect(wire[0]!.toString()).toBe('<IDS|MSG>');
    expect(wire[1]!.toString()).toMatch(/^[0-9a-f]{64}$/);
    const decoded = decodeMessage<{ code: string }>(wire, signer);
    expect(decoded.header).toEqual(header);
    expect(decoded.header.version).toBe('5.3');
    expect(decoded.content.code).toBe('1+1');
    expect(decoded.parentHeader).toEqual({});
  });

  it('gives every message a fresh msg_id (the kernel rejects reused signatures)', () => {
    const ids = new Set(Array.from({ length: 50 }, () => frames().header.msg_id));
    expect(ids.size).toBe(50);
  });

  it('keeps routing identities before the delimiter', () => {
    const { frames: wire } = encodeMessage(
      { msgType: 'x', content: {}, session: 's', identities: [Buffer.from('peer')] },
      signer,
    );
    expect(verifyFrames(wire, signer).identities.map(String)).toEqual(['peer']);
  });

  it('rejects an unsigned message', () => {
    const { frames: wire } = frames();
    wire[1] = Buffer.alloc(0);
    expect(() => verifyFrames(wire, signer)).toThrow(InvalidSignatureError);
  });

  it('rejects a message signed with another key', () => {
    const { frames: wire } = encodeMessage(
      { msgType: 'stream', content: { text: 'forged' }, session: 's' },
      new MessageSigner('wrong-key'),
    );
    expect(() => verifyFrames(wire, signer)).toThrow(/wrong HMAC signature/);
  });

  it('rejects a tampered content frame (verification is over the raw bytes)', () => {
    const { frames: wire } = frames();
    wire[5] = Buffer.from('{"code": "1+1"}'); // same JSON value, different bytes
    expect(() => verifyFrames(wire, signer)).toThrow(InvalidSignatureError);
  });

  it('rejects frames without a delimiter or with missing parts', () => {
    expect(() => verifyFrames([Buffer.from('x')], signer)).toThrow(/Malformed/);
    const { frames: wire } = frames();
    expect(() => verifyFrames(wire.slice(0, 4), signer)).toThrow(/Malformed/);
  });
});
