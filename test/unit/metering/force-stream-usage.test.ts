import { describe, expect, it } from 'vitest';
import { forceStreamUsage } from '../../../src/metering/index.js';
import { MODEL } from './chat-fixtures.js';

const force = (text: string): { text: string; forced: boolean; same: boolean } => {
  const raw = Buffer.from(text);
  const { bytes, forced } = forceStreamUsage(raw, JSON.parse(text) as Record<string, unknown>);
  return { text: bytes.toString('utf8'), forced, same: bytes === raw };
};

const messages = '"messages":[{"role":"user","content":"Summarise step 3"}]';

describe('forceStreamUsage', () => {
  it('inserts stream_options right after the opening brace and keeps every other byte', () => {
    const body = `{"model":"${MODEL}", ${messages},"stream":true,"top_k":20,"chat_template_kwargs":{"enable_thinking":false}}`;
    expect(force(body)).toEqual({
      text: `{"stream_options":{"include_usage":true},"model":"${MODEL}", ${messages},"stream":true,"top_k":20,"chat_template_kwargs":{"enable_thinking":false}}`,
      forced: true,
      same: false,
    });
  });

  it('inserts after leading whitespace and a pretty-printed opening brace', () => {
    const body = `\n  {\n  "model": "${MODEL}",\n  ${messages},\n  "stream": true\n}\n`;
    expect(force(body).text).toBe(`\n  {"stream_options":{"include_usage":true},\n  "model": "${MODEL}",\n  ${messages},\n  "stream": true\n}\n`);
  });

  it('forwards the original Buffer when the request does not stream', () => {
    expect(force(`{"model":"${MODEL}",${messages}}`)).toMatchObject({ forced: false, same: true });
    expect(force(`{"model":"${MODEL}",${messages},"stream":false}`)).toMatchObject({ forced: false, same: true });
    expect(force(`{"model":"${MODEL}",${messages},"stream":"true"}`)).toMatchObject({ forced: false, same: true });
  });

  it('forwards the original Buffer when the client already asked for usage', () => {
    const body = `{"model":"${MODEL}",${messages},"stream":true,"stream_options":{"include_usage":true}}`;
    expect(force(body)).toEqual({ text: body, forced: false, same: true });
  });

  it('re-serialises, keeping key order and other options, when stream_options lacks include_usage', () => {
    const body = `{"model":"${MODEL}", "stream":true, "stream_options":{"include_usage":false,"continuous_usage_stats":true}, ${messages}}`;
    expect(force(body)).toEqual({
      text: `{"model":"${MODEL}","stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},${messages}}`,
      forced: true,
      same: false,
    });
  });

  it('replaces a null stream_options', () => {
    const body = `{"stream_options":null,"model":"${MODEL}",${messages},"stream":true}`;
    expect(force(body).text).toBe(`{"stream_options":{"include_usage":true},"model":"${MODEL}",${messages},"stream":true}`);
  });
});

describe('forceStreamUsage on the encodings Python reads', () => {
  const body = `{"model":"${MODEL}",${messages},"stream":true}`;
  const inserted = `{"stream_options":{"include_usage":true},"model":"${MODEL}",${messages},"stream":true}`;

  it('inserts after a UTF-8 BOM and the brace, keeping the BOM and every other byte', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const { bytes, forced } = forceStreamUsage(Buffer.concat([bom, Buffer.from(body)]), JSON.parse(body) as Record<string, unknown>);
    expect(forced).toBe(true);
    expect(bytes).toEqual(Buffer.concat([bom, Buffer.from(inserted)]));
  });

  it.each([
    ['UTF-16LE', Buffer.from(body, 'utf16le')],
    ['UTF-16BE', Buffer.from(body, 'utf16le').swap16()],
    ['UTF-16LE with its BOM', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(body, 'utf16le')])],
    ['UTF-32LE', Buffer.from([...body].flatMap((c) => [c.charCodeAt(0), 0, 0, 0]))],
  ])('re-serialises a body in %s as UTF-8 rather than insert ASCII bytes into it', (_encoding, raw) => {
    const { bytes, forced } = forceStreamUsage(raw, JSON.parse(body) as Record<string, unknown>);
    expect(forced).toBe(true);
    expect(bytes.toString('utf8')).toBe(`{"model":"${MODEL}",${messages},"stream":true,"stream_options":{"include_usage":true}}`);
  });
});
