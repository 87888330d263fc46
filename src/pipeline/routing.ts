import type { ModelAccess, ModelRoute, ModelRouter } from '../models/index.js';
import { BufferedBody, type Upstream } from '../proxy/index.js';
import { detectJsonEncoding, withTopLevelString } from '../python-json/index.js';
import { decodeJsonText } from '../validation/index.js';
import type { Caller, PreparedBody } from './values.js';

/**
 * A chat body asking for `model` instead (SPEC 22: an alias's target, a fallback): only the
 * `model` value Python reads (the last of duplicate keys) changes, every other byte is as sent.
 * A body in UTF-16/32 or with a BOM is sent as UTF-8 (json.loads reads either alike).
 */
export function chatBodyFor(body: PreparedBody, model: string): PreparedBody {
  const source = body.forwardBytes!;
  const { encoding, start } = detectJsonEncoding(source);
  const utf8 = encoding === 'utf-8' && start === 0 ? source : Buffer.from(decodeJsonText(source), 'utf8');
  const bytes = withTopLevelString(utf8, 'model', model) ?? utf8;
  return {
    ...body,
    chat: { ...body.chat!, model },
    forwardBytes: bytes,
    headers: { ...body.headers, 'content-length': String(bytes.length) },
    open: () => new BufferedBody(bytes),
  };
}

/** What choosing a fallback needs, prepared once per configuration. */
export interface FallbackDeps {
  readonly access: ModelAccess;
  readonly router: ModelRouter;
  readonly upstreams: Readonly<Record<string, Upstream>>;
}

/** Answers after which a chat goes to its next fallback, when nothing reached the client yet (SPEC 22). */
export const FALLBACK_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/**
 * The fallbacks of one chat, in order, each tried once: those the caller may use, on an upstream
 * with a target that has not received this chat already (a chat is never re-sent to a target).
 */
export class FallbackPlan {
  private index = 0;
  /** `<upstream> <host:port>` of every target the chat reached. */
  private readonly reached: string[] = [];

  constructor(
    private readonly caller: Caller,
    private readonly route: ModelRoute,
    private readonly deps: FallbackDeps,
  ) {}

  /** Notes that `target` of `upstream` received the chat. */
  reachedTarget(upstream: Upstream, target: string): void {
    this.reached.push(`${upstream.name} ${target}`);
  }

  /** The targets of `upstream` the chat must not go to again. */
  avoidOn(upstream: Upstream): string[] {
    const prefix = `${upstream.name} `;
    return this.reached.filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length));
  }

  /** The next fallback to try, or undefined when none is left. */
  next(): { readonly model: string; readonly upstream: Upstream } | undefined {
    const { fallbacks } = this.route;
    while (this.index < fallbacks.length) {
      const model = fallbacks[this.index++]!;
      if (this.deps.access.refusal(this.caller, model) !== undefined) continue;
      const upstream = this.deps.upstreams[this.deps.router.upstreamOf(model)];
      if (upstream === undefined) continue;
      const avoid = this.avoidOn(upstream);
      if (upstream.targetKeys.every((key) => avoid.includes(key))) continue;
      return { model, upstream };
    }
    return undefined;
  }
}
