import { jsonKey, nextKeyValue } from './json-scan.js';

const USAGE_KEY = jsonKey('usage');

/**
 * Cheap pre-check on raw event bytes: true when a `"usage"` key is followed by something other
 * than `null`. Every ordinary chunk of a usage-enabled stream carries `"usage":null`, and this
 * keeps them from being JSON-parsed. Inside JSON strings a quote is escaped, so `"usage"` can
 * only be a key or a whole string value (then no colon follows). False positives only cost a parse.
 */
export function mayCarryUsage(event: Buffer): boolean {
  for (let i = nextKeyValue(event, USAGE_KEY); i !== -1; i = nextKeyValue(event, USAGE_KEY, i)) {
    const isNull = event[i] === 0x6e && event[i + 1] === 0x75 && event[i + 2] === 0x6c && event[i + 3] === 0x6c;
    if (!isNull) return true;
  }
  return false;
}

/**
 * The `data` of one complete SSE event: its `data:` lines (one optional space after the colon
 * removed) joined by LF, per the SSE grammar. Null when the event has no data line
 * (comments, `event:`/`id:`-only events, garbage lines).
 */
export function eventData(event: Buffer): string | null {
  let data: string | null = null;
  for (const line of event.toString('utf8').split(/\r\n|\r|\n/)) {
    let value: string;
    if (line === 'data') value = '';
    else if (line.startsWith('data:')) value = line.charCodeAt(5) === 0x20 ? line.slice(6) : line.slice(5);
    else continue;
    data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}
