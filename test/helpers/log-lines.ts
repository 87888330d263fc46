import { Writable } from 'node:stream';

/**
 * A pino destination for tests: each JSON line the logger writes is parsed into `lines` (pino
 * writes whole lines); `onText`, if given, also gets the raw text.
 */
export function jsonLineSink(lines: Array<Record<string, unknown>>, onText?: (text: string) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      const text = chunk.toString();
      onText?.(text);
      for (const line of text.split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
}
