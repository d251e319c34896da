import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { InvalidSignatureError } from './errors.js';

/** Version of the Jupyter messaging protocol this client speaks. */
export const PROTOCOL_VERSION = '5.3';

const DELIMITER = Buffer.from('<IDS|MSG>');
const EMPTY_OBJECT = Buffer.from('{}');

/** Header of a Jupyter message (protocol 5.3). @internal */
export interface MessageHeader {
  msg_id: string;
  session: string;
  username: string;
  date: string;
  msg_type: string;
  version: string;
}

/** A decoded Jupyter message. @internal */
export interface JupyterMessage<Content = Record<string, unknown>> {
  identities: Buffer[];
  header: MessageHeader;
  /** The header of the request this message answers, or `{}`. */
  parentHeader: Partial<MessageHeader>;
  metadata: Record<string, unknown>;
  content: Content;
  buffers: Buffer[];
}

/**
 * Signs outgoing messages and verifies incoming ones with HMAC-SHA256 over the raw frames of
 * header, parent header, metadata and content, as the Jupyter wire protocol requires.
 * @internal
 */
export class MessageSigner {
  readonly #key: Buffer;

  constructor(key: string) {
    this.#key = Buffer.from(key, 'utf8');
  }

  /** Hex HMAC-SHA256 of the four message parts. */
  sign(parts: readonly Buffer[]): string {
    const hmac = createHmac('sha256', this.#key);
    for (const part of parts) hmac.update(part);
    return hmac.digest('hex');
  }

  /** True when `signature` (hex, as received) matches the parts; constant-time. */
  verify(signature: Buffer, parts: readonly Buffer[]): boolean {
    const expected = Buffer.from(this.sign(parts), 'utf8');
    return signature.length === expected.length && timingSafeEqual(signature, expected);
  }
}

/** Everything needed to build a request. @internal */
export interface OutgoingMessage {
  msgType: string;
  content: Record<string, unknown>;
  session: string;
  parentHeader?: Partial<MessageHeader>;
  metadata?: Record<string, unknown>;
  identities?: Buffer[];
}

/**
 * Encode and sign a message into wire frames. Every message gets a fresh `msg_id`: the kernel
 * rejects a signature it has seen before.
 * @internal
 */
export function encodeMessage(
  message: OutgoingMessage,
  signer: MessageSigner,
): { frames: Buffer[]; header: MessageHeader } {
  const header: MessageHeader = {
    msg_id: randomUUID(),
    session: message.session,
    username: 'quiver',
    date: new Date().toISOString(),
    msg_type: message.msgType,
    version: PROTOCOL_VERSION,
  };
  const parts = [
    Buffer.from(JSON.stringify(header)),
    message.parentHeader ? Buffer.from(JSON.stringify(message.parentHeader)) : EMPTY_OBJECT,
    message.metadata ? Buffer.from(JSON.stringify(message.metadata)) : EMPTY_OBJECT,
    Buffer.from(JSON.stringify(message.content)),
  ];
  const signature = Buffer.from(signer.sign(parts));
  return { frames: [...(message.identities ?? []), DELIMITER, signature, ...parts], header };
}

/** The frames of a message split at the delimiter, verified but not yet parsed. @internal */
export interface RawMessage {
  identities: Buffer[];
  /** header, parent header, metadata, content (raw JSON bytes). */
  parts: [Buffer, Buffer, Buffer, Buffer];
  buffers: Buffer[];
}

/**
 * Split received frames at the `<IDS|MSG>` delimiter and verify the signature over the raw
 * bytes as received (re-serialising parsed JSON would not reproduce them).
 * @throws {InvalidSignatureError} when the message is malformed, unsigned or mis-signed.
 * @internal
 */
export function verifyFrames(frames: readonly Buffer[], signer: MessageSigner): RawMessage {
  const delimiterIndex = frames.findIndex((frame) => frame.equals(DELIMITER));
  if (delimiterIndex < 0 || frames.length < delimiterIndex + 6) {
    throw new InvalidSignatureError('Malformed Jupyter message: no delimiter or missing frames.');
  }
  const signature = frames[delimiterIndex + 1]!;
  const parts = frames.slice(delimiterIndex + 2, delimiterIndex + 6) as [
    Buffer,
    Buffer,
    Buffer,
    Buffer,
  ];
  if (signature.length === 0) throw new InvalidSignatureError('Unsigned Jupyter message rejected.');
  if (!signer.verify(signature, parts)) {
    throw new InvalidSignatureError('Jupyter message with a wrong HMAC signature rejected.');
  }
  return {
    identities: frames.slice(0, delimiterIndex) as Buffer[],
    parts,
    buffers: frames.slice(delimiterIndex + 6) as Buffer[],
  };
}

/** Parse the header and parent header only (cheap; content may be large). @internal */
export function parseHeaders(raw: RawMessage): {
  header: MessageHeader;
  parentHeader: Partial<MessageHeader>;
} {
  return {
    header: JSON.parse(raw.parts[0].toString('utf8')) as MessageHeader,
    parentHeader: JSON.parse(raw.parts[1].toString('utf8')) as Partial<MessageHeader>,
  };
}

/**
 * Verify and fully decode received frames.
 * @throws {InvalidSignatureError} when the message is malformed, unsigned or mis-signed.
 * @internal
 */
export function decodeMessage<Content = Record<string, unknown>>(
  frames: readonly Buffer[],
  signer: MessageSigner,
): JupyterMessage<Content> {
  const raw = verifyFrames(frames, signer);
  const { header, parentHeader } = parseHeaders(raw);
  return {
    identities: raw.identities,
    header,
    parentHeader,
    metadata: JSON.parse(raw.parts[2].toString('utf8')) as Record<string, unknown>,
    content: JSON.parse(raw.parts[3].toString('utf8')) as Content,
    buffers: raw.buffers,
  };
}
