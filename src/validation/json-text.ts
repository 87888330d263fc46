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
 * The text `json.loads(bytes)` parses: encoding chosen as `json.detect_encoding` does (BOMs,
 * then NUL-byte patterns of UTF-16/32, else UTF-8; a UTF-8 BOM is dropped). Bytes that do not
 * decode become U+FFFD, where Python would fail and FastAPI answer 400.
 */
export function decodeJsonText(raw: Buffer): string {
  const b0 = raw[0];
  const b1 = raw[1];
  const b2 = raw[2];
  const b3 = raw[3];
  if (b0 === 0x00 && b1 === 0x00 && b2 === 0xfe && b3 === 0xff) return decodeUtf32(raw, 4, false);
  if (b0 === 0xff && b1 === 0xfe && b2 === 0x00 && b3 === 0x00) return decodeUtf32(raw, 4, true);
  if (b0 === 0xfe && b1 === 0xff) return decodeUtf16(raw, 2, false);
  if (b0 === 0xff && b1 === 0xfe) return decodeUtf16(raw, 2, true);
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) return raw.toString('utf8', 3);
  if (raw.length >= 4) {
    if (b0 === 0) return b1 ? decodeUtf16(raw, 0, false) : decodeUtf32(raw, 0, false);
    if (b1 === 0) return b2 || b3 ? decodeUtf16(raw, 0, true) : decodeUtf32(raw, 0, true);
  } else if (raw.length === 2) {
    if (b0 === 0) return decodeUtf16(raw, 0, false);
    if (b1 === 0) return decodeUtf16(raw, 0, true);
  }
  return raw.toString('utf8');
}
