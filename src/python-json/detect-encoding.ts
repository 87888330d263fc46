/**
 * How Python's `json.detect_encoding` reads the bytes of a JSON document: a BOM names the
 * encoding (and is skipped); without one, the pattern of NUL bytes in the first four bytes
 * picks UTF-16/32; everything else is UTF-8. The training service (FastAPI) parses request
 * bodies this way, so the gateway must read them the same way: validation decodes with it,
 * and metering's in-place rewrite of a streaming body applies only to UTF-8 text.
 */
export type JsonEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be';

export interface DetectedEncoding {
  readonly encoding: JsonEncoding;
  /** The offset of the first byte of text: the BOM's length, or 0. */
  readonly start: number;
}

// One constant per outcome: detection runs on every chat body and allocates nothing.
const detected = (encoding: JsonEncoding, start: number): DetectedEncoding => Object.freeze({ encoding, start });
const UTF8 = detected('utf-8', 0);
const UTF8_BOM = detected('utf-8', 3);
const UTF16LE = detected('utf-16le', 0);
const UTF16LE_BOM = detected('utf-16le', 2);
const UTF16BE = detected('utf-16be', 0);
const UTF16BE_BOM = detected('utf-16be', 2);
const UTF32LE = detected('utf-32le', 0);
const UTF32LE_BOM = detected('utf-32le', 4);
const UTF32BE = detected('utf-32be', 0);
const UTF32BE_BOM = detected('utf-32be', 4);

/** The encoding `json.loads(raw)` would decode `raw` with, and where its text starts. */
export function detectJsonEncoding(raw: Uint8Array): DetectedEncoding {
  const b0 = raw[0];
  const b1 = raw[1];
  const b2 = raw[2];
  const b3 = raw[3];
  // The UTF-32 BOMs first: FF FE 00 00 also starts with the UTF-16LE BOM.
  if (b0 === 0x00 && b1 === 0x00 && b2 === 0xfe && b3 === 0xff) return UTF32BE_BOM;
  if (b0 === 0xff && b1 === 0xfe && b2 === 0x00 && b3 === 0x00) return UTF32LE_BOM;
  if (b0 === 0xfe && b1 === 0xff) return UTF16BE_BOM;
  if (b0 === 0xff && b1 === 0xfe) return UTF16LE_BOM;
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) return UTF8_BOM;
  if (raw.length >= 4) {
    if (b0 === 0) return b1 ? UTF16BE : UTF32BE;
    if (b1 === 0) return b2 || b3 ? UTF16LE : UTF32LE;
  } else if (raw.length === 2) {
    if (b0 === 0) return UTF16BE;
    if (b1 === 0) return UTF16LE;
  }
  return UTF8;
}
