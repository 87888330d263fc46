import { describe, expect, it } from 'vitest';
import { LEDGER_TEXT_MAX_CHARS, storableText } from '../../../src/metering/ledger.js';

describe('storableText: a client-chosen model name (or key id) as every database stores and indexes it', () => {
  it('keeps text up to the limit as it is', () => {
    expect(storableText('OpenPipe/Qwen3-14B-Instruct', 256)).toBe('OpenPipe/Qwen3-14B-Instruct');
    expect(storableText('x'.repeat(256), 256)).toBe('x'.repeat(256));
    expect(storableText('', 256)).toBe('');
  });

  it('replaces every NUL (PostgreSQL text refuses it) with U+FFFD', () => {
    expect(storableText('a\u0000b\u0000', 256)).toBe('a\ufffdb\ufffd');
  });

  it('cuts longer text to the limit, ending in an ellipsis, never inside a surrogate pair', () => {
    expect(storableText('x'.repeat(257), 256)).toBe(`${'x'.repeat(255)}…`);
    const emoji = '😀'.repeat(200); // 400 UTF-16 units
    const cut = storableText(emoji, 256);
    expect(cut).toBe(`${'😀'.repeat(127)}…`);
    expect(cut.length).toBeLessThanOrEqual(256);
    expect(storableText(`x${emoji}`, 256)).toBe(`x${'😀'.repeat(127)}…`);
    expect(LEDGER_TEXT_MAX_CHARS).toBe(256);
  });
});
