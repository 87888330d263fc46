import { detectJsonEncoding } from '../python-json/index.js';

/**
 * FastAPI's choice of body parsing: a body is parsed as JSON when Content-Type is missing or
 * empty, or its media type (parameters dropped, case-insensitive) is `application/json` or
 * `application/<anything>+json`; any other body reaches pydantic as raw bytes. Mirrors
 * `email.message.Message.get_content_type`, which also turns a type without exactly one `/`
 * into `text/plain`.
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return true;
  if (contentType === 'application/json') return true;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  const slash = mediaType.indexOf('/');
  if (slash === -1 || mediaType.indexOf('/', slash + 1) !== -1) return false;
  if (mediaType.slice(0, slash) !== 'application') return false;
  const subtype = mediaType.slice(slash + 1);
  return subtype === 'json' || subtype.endsWith('+json');
}

function decodeUtf32(raw: Buffer, start: number, littleEndian: boolean): string {
  const parts: string[] = [];
  for (let at = start; at < raw.length; at += 4) {
    const cp = at + 4 <= raw.length ? (littleEndian ? raw.readUInt32LE(at) : raw.readUInt32BE(at)) : -1;
    parts.push(cp >= 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : '\ufffd');
  }
  return parts.join('');
}

function decodeUtf16(raw: Buffer, start: number, littleEndian: boolean): string {
  // ignoreBOM: a BOM after the one Python's codec consumed is content, not a marker.
  return new TextDecoder(littleEndian ? 'utf-16le' : 'utf-16be', { ignoreBOM: true }).decode(raw.subarray(start));
}

/**
 * The text `json.loads(bytes)` parses: the encoding chosen as `json.detect_encoding` does
 * (../python-json/detect-encoding.ts; a BOM is dropped). Bytes that do not decode become U+FFFD, where
 * Python would fail and FastAPI answer 400.
 */
export function decodeJsonText(raw: Buffer): string {
  const { encoding, start } = detectJsonEncoding(raw);
  switch (encoding) {
    case 'utf-8':
      return raw.toString('utf8', start);
    case 'utf-16le':
      return decodeUtf16(raw, start, true);
    case 'utf-16be':
      return decodeUtf16(raw, start, false);
    case 'utf-32le':
      return decodeUtf32(raw, start, true);
    case 'utf-32be':
      return decodeUtf32(raw, start, false);
  }
}
