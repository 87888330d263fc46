interface OpenContainer {
  readonly close: string;
  readonly members: Iterator<string | undefined>;
}

/** JSON.stringify(value) of a member, or undefined when it opened a container (pushed on `open`). */
function scalarOrOpen(value: unknown, open: OpenContainer[]): string | undefined {
  if (value === null || typeof value !== 'object') {
    return typeof value === 'number' && !Number.isFinite(value) ? 'null' : JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    open.push({ close: ']', members: listMembers(value, open) });
    return undefined;
  }
  open.push({ close: '}', members: dictMembers(value as Record<string, unknown>, open) });
  return undefined;
}

/** Yields the text before each item (and the item itself when scalar). */
function* listMembers(list: readonly unknown[], open: OpenContainer[]): Generator<string | undefined> {
  yield '[';
  for (let i = 0; i < list.length; i++) {
    if (i > 0) yield ',';
    yield scalarOrOpen(list[i], open);
  }
}

function* dictMembers(dict: Record<string, unknown>, open: OpenContainer[]): Generator<string | undefined> {
  yield '{';
  let first = true;
  for (const key of Object.keys(dict)) {
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield scalarOrOpen(dict[key], open);
  }
}

/**
 * JSON.stringify for what JSON.parse returns (plain objects, arrays, strings, numbers,
 * booleans, null), without recursion: JSON.stringify throws RangeError on a body nested some
 * ten thousand levels deep, which JSON.parse reads fine.
 */
export function stringifyWithoutRecursion(root: unknown): string {
  const out: string[] = [];
  const open: OpenContainer[] = [];
  const text = scalarOrOpen(root, open);
  if (text !== undefined) return text;
  while (open.length > 0) {
    const container = open[open.length - 1]!;
    const next = container.members.next();
    if (next.done === true) {
      out.push(container.close);
      open.pop();
    } else if (next.value !== undefined) {
      out.push(next.value);
    }
  }
  return out.join('');
}
