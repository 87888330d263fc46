const LF = 0x0a;
const CR = 0x0d;

/**
 * Finds where Server-Sent Events end — the offset just after the blank line that terminates
 * each — in a stream that arrives in arbitrary chunks. Lines end with LF, CRLF or a lone CR
 * (the SSE grammar), and a terminator or a blank line may be split across chunks.
 * Uses Buffer.indexOf (native) to jump between terminators instead of a byte loop.
 */
export class SseEventBoundaries {
  /** The current line has bytes other than its terminator (possibly in an earlier chunk). */
  private lineHasContent = false;
  /** The last chunk ended with CR: an LF starting the next chunk belongs to that terminator. */
  private afterCR = false;
  /** That trailing CR ended a blank line: the event is over but may still own one LF. */
  private boundaryAfterCR = false;

  /** Fills `out` with the offsets in `chunk` at which an event ends, in order. */
  find(chunk: Buffer, out: number[]): void {
    out.length = 0;
    const len = chunk.length;
    if (len === 0) return;
    let i = 0;
    if (this.afterCR) {
      this.afterCR = false;
      if (chunk[0] === LF) i = 1;
      if (this.boundaryAfterCR) {
        this.boundaryAfterCR = false;
        out.push(i);
      }
    }
    let nextLF = chunk.indexOf(LF, i);
    let nextCR = chunk.indexOf(CR, i);
    while (i < len) {
      if (nextLF !== -1 && nextLF < i) nextLF = chunk.indexOf(LF, i);
      if (nextCR !== -1 && nextCR < i) nextCR = chunk.indexOf(CR, i);
      const t = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR);
      if (t === -1) {
        this.lineHasContent = true;
        return;
      }
      const blank = t === i && !this.lineHasContent;
      this.lineHasContent = false;
      if (chunk[t] === CR) {
        if (t + 1 === len) {
          this.afterCR = true;
          this.boundaryAfterCR = blank;
          return;
        }
        i = chunk[t + 1] === LF ? t + 2 : t + 1;
      } else {
        i = t + 1;
      }
      if (blank) out.push(i);
    }
  }
}
