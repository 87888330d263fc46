/** One sample line of the Prometheus text format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the sample lines of an exposition (label values here never contain quotes or commas). */
export function parseSamples(body: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match?.[1] || !match[3]) throw new Error(`unparsable sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** `# TYPE` of every metric family in an exposition. */
export function parseTypes(body: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const match of body.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(match[1] ?? '', match[2] ?? '');
  return types;
}

/** `# HELP` text of every metric family in an exposition. */
export function parseHelp(body: string): Map<string, string> {
  const help = new Map<string, string>();
  for (const match of body.matchAll(/^# HELP (\S+) (.*)$/gm)) help.set(match[1] ?? '', match[2] ?? '');
  return help;
}

/** The distinct label-name sets (sorted, comma-joined) that series of `name` carry. */
export function labelSets(samples: Sample[], name: string): string[] {
  const sets = new Set(samples.filter((s) => s.name === name).map((s) => Object.keys(s.labels).sort().join(',')));
  return [...sets];
}
