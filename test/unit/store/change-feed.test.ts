import { describe, expect, it } from 'vitest';
import { ChangeFeed, type StoreChange } from '../../../src/store/index.js';

function recordingFeed() {
  const warnings: string[] = [];
  const feed = new ChangeFeed({ warn: (_obj, msg) => warnings.push(msg) });
  const heard: StoreChange[] = [];
  feed.subscribe((change) => heard.push(change));
  return { feed, heard, warnings };
}

describe('ChangeFeed', () => {
  it("emits another instance's notification and skips its own echo", () => {
    const mine = recordingFeed();
    const theirs = recordingFeed();
    const change: StoreChange = { kind: 'resource', id: 'm1', resourceKind: 'model' };
    mine.feed.receive(mine.feed.encode(change));
    expect(mine.heard).toEqual([]);
    mine.feed.receive(theirs.feed.encode(change));
    expect(mine.heard).toEqual([change]);
  });

  it('ignores malformed payloads with a warning', () => {
    const { feed, heard, warnings } = recordingFeed();
    feed.receive('not json');
    feed.receive(JSON.stringify({ origin: 'x', change: { kind: 'key' } }));
    feed.receive(JSON.stringify({ origin: 'x', change: { kind: 'bogus', id: 'a' } }));
    expect(heard).toEqual([]);
    expect(warnings).toEqual([
      'ignored a store change notification that is not JSON',
      'ignored a malformed store change notification',
      'ignored a malformed store change notification',
    ]);
  });

  it('calls a listener subscribed twice twice, and unsubscribes each subscription alone', () => {
    const feed = new ChangeFeed({ warn: () => undefined });
    const heard: string[] = [];
    const listener = (change: StoreChange): void => void heard.push(change.kind);
    const first = feed.subscribe(listener);
    feed.subscribe(listener);
    feed.emit({ kind: 'resync' });
    first();
    feed.emit({ kind: 'resync' });
    expect(heard).toEqual(['resync', 'resync', 'resync']);
  });
});
