import { describe, expect, it } from 'vitest';
import { LEDGER_TEXT_MAX_CHARS, storableText } from '../../../src/metering/index.js';

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
    // Only the pair the cut would split matters: what follows it (plain text, U+E000) or its high half's value (U+DBFF) does not.
    const pad = 'x'.repeat(254);
    expect(storableText(`${pad}😀yyyy`, 256)).toBe(`${pad}…`);
    expect(storableText(`${pad}😀yy\ue000y`, 256)).toBe(`${pad}…`);
    expect(storableText(`${pad}\u{10FFFF}yy`, 256)).toBe(`${pad}…`);
    expect(storableText(`${pad}y😀y`, 256)).toBe(`${pad}y…`);
    expect(LEDGER_TEXT_MAX_CHARS).toBe(256);
  });
});
