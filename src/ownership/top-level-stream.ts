import type { PythonReadLimits } from '../python-json/index.js';

/*
 * The streamed twin of `pythonTopLevelMembers` (src/python-json/decoder.ts): reads a
 * body's bytes as they arrive, in O(1) memory per byte (the values of wanted members aside), and
 * reaches exactly the verdict Python's `json.loads(raw_bytes)` reaches on the whole body — for
 * strict UTF-8 bytes without a BOM, the only ones it accepts. Once the text is known not to be
 * read by Python (or not as one object, or past `limits`), it refuses at once: a verdict never
 * waits for the end. The property test (test/unit/ownership/owner-fields-python.test.ts) holds
 * it to the whole-body reader and to python3, in random chunkings.
 */

/** Why a streamed body cannot be read with certainty. */
export type StreamRefusal =
  | { readonly kind: 'encoding' }
  | { readonly kind: 'syntax' }
  | { readonly kind: 'duplicate'; readonly key: string }
  | { readonly kind: 'surrogate'; readonly key: string };

export class StreamRefused extends Error {
  constructor(readonly refusal: StreamRefusal) {
    super(refusal.kind);
  }
}

/** A wanted top-level member's value: its text when it is a string, else `undefined` (its value is not kept). */
export type StreamedValue = string | undefined;

const BOM = [0xef, 0xbb, 0xbf];
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const CONSTANT_BY_FIRST: Readonly<Record<string, string>> = { n: 'null', t: 'true', f: 'false', N: 'NaN', I: 'Infinity' };

/** Where the structure is: what the next significant character may be. */
const enum Expect {
  /** The `{` of the top-level object. */
  Start,
  /** A key or `}` (just after `{`). */
  FirstKey,
  /** A key (after `,` in an object). */
  Key,
  Colon,
  Value,
  /** A value or `]` (just after `[`). */
  FirstValue,
  /** `,` or the closing bracket of the innermost container. */
  AfterValue,
  /** Only whitespace, after the top-level object. */
  Done,
}

/** Inside a token (a string, number or constant), or not. */
const enum Token {
  None,
  String,
  Number,
  Word,
}

/** States of the number automaton (Python's NUMBER_RE, greedy). */
const enum Num {
  Minus,
  Zero,
  Int,
  Dot,
  Frac,
  E,
  ESign,
  Exp,
}

const ACCEPTING = new Set([Num.Zero, Num.Int, Num.Frac, Num.Exp]);

const isWhitespace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isHex = (c: string): boolean => isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');

/**
 * Reads a body's top-level object as it streams, reporting each wanted top-level member once
 * (`onMember`, when its value is complete); throws `StreamRefused` as soon as the body cannot be
 * read with certainty: not strict UTF-8 or with a BOM, not Python's JSON, not one object with
 * only whitespace after it, past `limits`, a wanted key twice, a wanted string value with an
 * unpaired surrogate.
 */
export class TopLevelStream {
  private head: number[] | null = [];
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private readonly longestWanted: number;
  private readonly seen = new Set<string>();
  /** Open containers, innermost last: true for an object. */
  private readonly open: boolean[] = [];
  private expect = Expect.Start;
  private token = Token.None;
  // A string: what it is, its text when kept, and where in an escape it is.
  private stringIsKey = false;
  private keep = false;
  private text = '';
  private escape: 'none' | 'backslash' | 'hex' = 'none';
  private hex = '';
  // A number or constant.
  private num = Num.Minus;
  private intDigits = 0;
  private word = '';
  private wordAt = 0;
  /** The top-level member whose value is being read (undefined: not a wanted one). */
  private member: string | undefined;
  private key = '';
  private failed = false;

  constructor(
    private readonly wanted: ReadonlySet<string>,
    private readonly limits: PythonReadLimits,
    private readonly onMember: (key: string, value: StreamedValue) => void,
  ) {
    this.longestWanted = Math.max(0, ...[...wanted].map((k) => k.length));
  }

  /** Reads the next bytes of the body. */
  write(bytes: Uint8Array): void {
    this.guard(() => {
      if (this.head !== null) {
        // The first four bytes tell Python the encoding: wait for them.
        const needed = Math.min(4 - this.head.length, bytes.length);
        this.head.push(...bytes.subarray(0, needed));
        if (this.head.length < 4) return;
        this.checkHead();
        bytes = bytes.subarray(needed);
      }
      this.read(this.decode(bytes, true));
    });
  }

  /** The body has ended: throws unless it was one whole object. */
  end(): void {
    this.guard(() => {
      if (this.head !== null) this.checkHead();
      this.read(this.decode(new Uint8Array(0), false));
      if (this.token !== Token.None || this.expect !== Expect.Done) this.refuse({ kind: 'syntax' });
    });
  }

  private guard(step: () => void): void {
    if (this.failed) throw new StreamRefused({ kind: 'syntax' });
    try {
      step();
    } catch (err) {
      this.failed = true;
      throw err;
    }
  }

  private refuse(refusal: StreamRefusal): never {
    throw new StreamRefused(refusal);
  }

  /** No BOM, no NUL among the first four bytes (Python would read UTF-16/32). */
  private checkHead(): void {
    const head = this.head!;
    this.head = null;
    if (BOM.every((b, i) => head[i] === b) || head.includes(0)) this.refuse({ kind: 'encoding' });
    this.read(this.decode(Uint8Array.from(head), true));
  }

  private decode(bytes: Uint8Array, more: boolean): string {
    try {
      return this.utf8.decode(bytes, { stream: more });
    } catch {
      return this.refuse({ kind: 'encoding' });
    }
  }

  private read(s: string): void {
    let i = 0;
    while (i < s.length) {
      if (this.token === Token.String) i = this.readString(s, i);
      else if (this.token !== Token.None && this.readTokenChar(s.charAt(i))) i++;
      else this.readStructure(s.charAt(i++));
    }
  }

  /** One character outside any token. */
  private readStructure(c: string): void {
    if (isWhitespace(c)) return;
    switch (this.expect) {
      case Expect.Start:
        if (c !== '{') this.refuse({ kind: 'syntax' });
        return this.openContainer(true);
      case Expect.FirstKey:
        if (c === '}') return this.closeContainer();
        return this.startKey(c);
      case Expect.Key:
        return this.startKey(c);
      case Expect.Colon:
        if (c !== ':') this.refuse({ kind: 'syntax' });
        this.expect = Expect.Value;
        return;
      case Expect.FirstValue:
        if (c === ']') return this.closeContainer();
        return this.startValue(c);
      case Expect.Value:
        return this.startValue(c);
      case Expect.AfterValue:
        return this.afterValue(c);
      case Expect.Done:
        return this.refuse({ kind: 'syntax' });
    }
  }

  private startKey(c: string): void {
    if (c !== '"') this.refuse({ kind: 'syntax' });
    this.startString(true, this.open.length === 1);
  }

  private startValue(c: string): void {
    if (c === '{' || c === '[') return this.openContainer(c === '{');
    if (c === '"') return this.startString(false, this.member !== undefined && this.open.length === 1);
    if (c === '-' || isDigit(c)) {
      this.token = Token.Number;
      this.num = c === '-' ? Num.Minus : c === '0' ? Num.Zero : Num.Int;
      this.intDigits = c === '-' ? 0 : 1;
      return;
    }
    const word = CONSTANT_BY_FIRST[c];
    if (word === undefined) this.refuse({ kind: 'syntax' });
    this.startWord(word, 1);
  }

  private startWord(word: string, at: number): void {
    this.token = Token.Word;
    this.word = word;
    this.wordAt = at;
  }

  private openContainer(isObject: boolean): void {
    // Python recurses into every container, empty ones too; the top-level object is one level.
    if (this.open.length >= this.limits.maxDepth) this.refuse({ kind: 'syntax' });
    this.open.push(isObject);
    this.expect = isObject ? Expect.FirstKey : Expect.FirstValue;
  }

  private closeContainer(): void {
    this.open.pop();
    this.valueDone(undefined);
  }

  /** A value ended (`text`: the string it was, if kept). */
  private valueDone(text: StreamedValue): void {
    if (this.open.length === 0) {
      this.expect = Expect.Done;
      return;
    }
    this.expect = Expect.AfterValue;
    if (this.open.length === 1 && this.member !== undefined) {
      const key = this.member;
      this.member = undefined;
      if (text !== undefined && LONE_SURROGATE.test(text)) this.refuse({ kind: 'surrogate', key });
      this.onMember(key, text);
    }
  }

  private afterValue(c: string): void {
    const inObject = this.open[this.open.length - 1]!;
    if (c === ',') {
      this.expect = inObject ? Expect.Key : Expect.Value;
      return;
    }
    if (c !== (inObject ? '}' : ']')) this.refuse({ kind: 'syntax' });
    this.closeContainer();
  }

  /** A key ended: a top-level wanted one is its member's, once. */
  private keyDone(): void {
    this.expect = Expect.Colon;
    if (this.open.length !== 1 || this.key.length > this.longestWanted || !this.wanted.has(this.key)) return;
    if (this.seen.has(this.key)) this.refuse({ kind: 'duplicate', key: this.key });
    this.seen.add(this.key);
    this.member = this.key;
  }

  private startString(isKey: boolean, keep: boolean): void {
    this.token = Token.String;
    this.stringIsKey = isKey;
    this.keep = keep;
    this.text = '';
    this.escape = 'none';
  }

  /** Appends to a kept string; a key is kept only as long as the longest wanted one (plus one, to tell it apart). */
  private append(piece: string): void {
    if (!this.keep) return;
    this.text += piece;
    if (this.stringIsKey && this.text.length > this.longestWanted) this.keep = false;
  }

  /** Reads string characters from `i`; returns where it stopped (past the closing quote, or the end). */
  private readString(s: string, i: number): number {
    while (i < s.length) {
      if (this.escape !== 'none') {
        this.readEscape(s.charAt(i++));
        continue;
      }
      // A run of plain characters at once: the hot path of a large upload.
      let run = i;
      for (; run < s.length; run++) {
        const code = s.charCodeAt(run);
        if (code === 0x22 || code === 0x5c) break;
        if (code <= 0x1f) this.refuse({ kind: 'syntax' });
      }
      if (this.keep && run > i) this.append(s.slice(i, run));
      if (run === s.length) return run;
      if (s.charCodeAt(run) === 0x5c) {
        this.escape = 'backslash';
        i = run + 1;
        continue;
      }
      this.token = Token.None;
      if (this.stringIsKey) {
        this.key = this.keep ? this.text : '\u0000'.repeat(this.longestWanted + 1);
        this.text = '';
        this.keyDone();
      } else {
        const text = this.keep ? this.text : undefined;
        this.text = '';
        this.valueDone(text);
      }
      return run + 1;
    }
    return i;
  }

  /**
   * One character of an escape. Python joins `\uD8xx\uDCxx` into one code point; as UTF-16 units
   * (what a JS string holds, and what is compared) joined or not is the same text, so each `\u`
   * escape appends its unit.
   */
  private readEscape(c: string): void {
    if (this.escape === 'backslash') {
      if (c === 'u') {
        this.escape = 'hex';
        this.hex = '';
        return;
      }
      const decoded = SIMPLE_ESCAPES[c];
      if (decoded === undefined) this.refuse({ kind: 'syntax' });
      this.append(decoded);
      this.escape = 'none';
      return;
    }
    if (!isHex(c)) this.refuse({ kind: 'syntax' });
    this.hex += c;
    if (this.hex.length < 4) return;
    this.append(String.fromCharCode(parseInt(this.hex, 16)));
    this.escape = 'none';
  }

  /** One character of a number or constant: true if it belongs to the token, false if it ended it (then read as structure). */
  private readTokenChar(c: string): boolean {
    if (this.token === Token.Word) {
      if (this.wordAt < this.word.length) {
        if (c !== this.word.charAt(this.wordAt)) this.refuse({ kind: 'syntax' });
        this.wordAt++;
        return true;
      }
      this.token = Token.None;
      this.valueDone(undefined);
      return false;
    }
    if (this.stepNumber(c)) return true;
    if (!ACCEPTING.has(this.num)) this.refuse({ kind: 'syntax' });
    if ((this.num === Num.Zero || this.num === Num.Int) && this.intDigits > this.limits.maxIntDigits) this.refuse({ kind: 'syntax' });
    this.token = Token.None;
    this.valueDone(undefined);
    return false;
  }

  /** Advances the number automaton by `c`; false when `c` is not part of the number. */
  private stepNumber(c: string): boolean {
    const digit = isDigit(c);
    switch (this.num) {
      case Num.Minus:
        if (c === 'I') {
          this.startWord('-Infinity', 2);
          return true;
        }
        if (!digit) return false;
        this.num = c === '0' ? Num.Zero : Num.Int;
        this.intDigits = 1;
        return true;
      case Num.Zero:
      case Num.Int:
        if (digit && this.num === Num.Int) this.intDigits++;
        else if (c === '.') this.num = Num.Dot;
        else if (c === 'e' || c === 'E') this.num = Num.E;
        else return false;
        return true;
      case Num.Dot:
      case Num.Frac:
        if (digit) this.num = Num.Frac;
        else if (this.num === Num.Frac && (c === 'e' || c === 'E')) this.num = Num.E;
        else return false;
        return true;
      case Num.E:
        if (c === '+' || c === '-') this.num = Num.ESign;
        else if (digit) this.num = Num.Exp;
        else return false;
        return true;
      case Num.ESign:
      case Num.Exp:
        if (!digit) return false;
        this.num = Num.Exp;
        return true;
    }
  }
}
