import { Redis } from 'ioredis';

/**
 * What the benchmark's private redis-server did during one measured run, from `INFO
 * commandstats` and `INFO cpu` read before and after it. Redis is shared by every gateway
 * instance, so its cost per request bounds the whole fleet (SPEC section 10).
 */

export interface CommandUsage {
  readonly calls: number;
  /** Time Redis spent executing these calls (commandstats `usec`). */
  readonly usec: number;
}

export interface RedisUsage {
  /** Per command (lower case). Redis also counts the commands a Lua script runs inside it. */
  readonly commands: ReadonlyMap<string, CommandUsage>;
  /** used_cpu_user + used_cpu_sys, in µs. */
  readonly cpuMicros: number;
}

/** The probe's own INFO calls are not the gateway's work. */
const OWN_COMMANDS = new Set(['info']);

export function parseCommandStats(info: string): Map<string, CommandUsage> {
  const commands = new Map<string, CommandUsage>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):(.*)$/gm)) {
    const fields = new Map(match[2]!.split(',').map((pair) => pair.split('=') as [string, string]));
    const name = match[1]!.toLowerCase();
    if (!OWN_COMMANDS.has(name)) commands.set(name, { calls: Number(fields.get('calls') ?? 0), usec: Number(fields.get('usec') ?? 0) });
  }
  return commands;
}

export function parseCpuMicros(info: string): number {
  const seconds = (field: string): number => Number(new RegExp(`^${field}:([0-9.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return Math.round((seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6);
}

/** after − before; commands that did not run in between are left out. */
export function usageBetween(before: RedisUsage, after: RedisUsage): RedisUsage {
  const commands = new Map<string, CommandUsage>();
  for (const [name, usage] of after.commands) {
    const earlier = before.commands.get(name) ?? { calls: 0, usec: 0 };
    if (usage.calls > earlier.calls) commands.set(name, { calls: usage.calls - earlier.calls, usec: usage.usec - earlier.usec });
  }
  return { commands, cpuMicros: after.cpuMicros - before.cpuMicros };
}

export function totalCalls(usage: RedisUsage): number {
  let calls = 0;
  for (const command of usage.commands.values()) calls += command.calls;
  return calls;
}

/** One connection to the benchmark's redis-server, used only to read its counters. */
export class RedisProbe {
  private readonly connection: Redis;

  constructor(url: string) {
    this.connection = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  }

  async read(): Promise<RedisUsage> {
    if (this.connection.status === 'wait') await this.connection.connect();
    const [commandStats, cpu] = await Promise.all([this.connection.info('commandstats'), this.connection.info('cpu')]);
    return { commands: parseCommandStats(commandStats), cpuMicros: parseCpuMicros(cpu) };
  }

  close(): void {
    this.connection.disconnect();
  }
}
