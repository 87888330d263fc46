import { describe, expect, it } from 'vitest';
import { detectJsonEncoding } from '../../src/python-json/index.js';

const bytes = (...b: number[]): Buffer => Buffer.from(b);

describe('detectJsonEncoding (json.detect_encoding)', () => {
  it.each([
    ['UTF-32BE BOM', bytes(0x00, 0x00, 0xfe, 0xff, 0, 0, 0, 0x7b), 'utf-32be', 4],
    ['UTF-32LE BOM (also the start of the UTF-16LE BOM)', bytes(0xff, 0xfe, 0x00, 0x00, 0x7b, 0, 0, 0), 'utf-32le', 4],
    ['UTF-16BE BOM', bytes(0xfe, 0xff, 0x00, 0x7b), 'utf-16be', 2],
    ['UTF-16LE BOM', bytes(0xff, 0xfe, 0x7b, 0x00), 'utf-16le', 2],
    ['UTF-8 BOM', bytes(0xef, 0xbb, 0xbf, 0x7b, 0x7d), 'utf-8', 3],
    ['UTF-32BE without a BOM', bytes(0, 0, 0, 0x7b, 0, 0, 0, 0x7d), 'utf-32be', 0],
    ['UTF-16BE without a BOM', bytes(0, 0x7b, 0, 0x7d), 'utf-16be', 0],
    ['UTF-32LE without a BOM', bytes(0x7b, 0, 0, 0, 0x7d, 0, 0, 0), 'utf-32le', 0],
    ['UTF-16LE without a BOM', bytes(0x7b, 0, 0x7d, 0), 'utf-16le', 0],
    ['UTF-16LE whose second character is not ASCII', bytes(0x7b, 0, 0, 0x4e), 'utf-16le', 0],
    ['UTF-16BE, two bytes', bytes(0, 0x31), 'utf-16be', 0],
    ['UTF-16LE, two bytes', bytes(0x31, 0), 'utf-16le', 0],
    ['three bytes with a NUL: too short for the patterns, so UTF-8', bytes(0x31, 0, 0x32), 'utf-8', 0],
    ['plain UTF-8', Buffer.from('{"a":1}'), 'utf-8', 0],
    ['empty', bytes(), 'utf-8', 0],
  ])('%s', (_name, raw, encoding, start) => {
    expect(detectJsonEncoding(raw)).toEqual({ encoding, start });
  });
});
