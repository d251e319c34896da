import type { ChatMessage, Language } from '@quiver/core';
import { messageText } from '@quiver/core';

// CJK Unified Ideographs (+ extension A) and CJK punctuation: enough to tell Chinese from English.
const CHINESE = /[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff01-\uff5e]/;

/**
 * Guess the conversation language: `zh` when any user message contains Chinese characters,
 * otherwise `en` (Qwen-Agent's rule; a single Chinese question should get Chinese prompts).
 *
 * @param messages - the conversation
 * @returns `zh` or `en`
 */
export function detectLanguage(messages: readonly ChatMessage[]): Language {
  for (const message of messages) {
    if (message.role !== 'user') continue;
    if (CHINESE.test(messageText(message))) return 'zh';
  }
  return 'en';
}
