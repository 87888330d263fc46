import { errors } from '../errors.js';

/** A model object as the OpenAI API lists it; other fields the upstream sends are kept. */
export interface ModelObject {
  readonly id: string;
  readonly object: string;
  readonly created: number;
  readonly owned_by: string;
  readonly [field: string]: unknown;
}

/** Fetches an upstream's list: its models, [] for a 404; throws when it could not be had. */
export type ListFetcher = (authorization: string | undefined) => Promise<readonly ModelObject[]>;

/**
 * One upstream's model list, cached (SPEC 21): a listing answers from memory; a list older than
 * `cacheMs` is refreshed in the background (one refresh in flight at a time) while the old one
 * is served. Only a list never fetched makes the caller wait — and fail (502) when the host is down.
 */
export class ModelCatalog {
  private models: readonly ModelObject[] | undefined;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<readonly ModelObject[]> | undefined;

  constructor(
    private readonly fetchList: ListFetcher,
    readonly cacheMs: number,
    private readonly onRefreshError: (err: unknown) => void,
  ) {}

  /** The list to filter; `authorization` is passed on when the upstream takes the client's key (passthrough). */
  async list(authorization: string | undefined): Promise<readonly ModelObject[]> {
    if (this.models === undefined) return this.refresh(authorization);
    if (performance.now() - this.fetchedAt >= this.cacheMs) this.refresh(authorization).catch(this.onRefreshError);
    return this.models;
  }

  private refresh(authorization: string | undefined): Promise<readonly ModelObject[]> {
    this.inFlight ??= this.fetchList(authorization)
      .then((models) => {
        this.models = models;
        this.fetchedAt = performance.now();
        return models;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }
}

const isModelObject = (value: unknown): value is ModelObject =>
  typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string';

/**
 * The fetcher of an OpenAI-compatible host's `GET <url>/v1/models`: `bearer` when the upstream
 * has one (SPEC 3 `auth`), else the client's own Authorization (passthrough). A 404 lists nothing.
 */
export function httpListFetcher(baseUrl: string, bearer: string | undefined, timeoutMs: number, upstream = 'inference'): ListFetcher {
  const url = `${baseUrl.replace(/\/$/, '')}/v1/models`;
  return async (authorization) => {
    const auth = bearer === undefined ? authorization : `Bearer ${bearer}`;
    let response: Response;
    try {
      response = await fetch(url, { headers: auth === undefined ? {} : { authorization: auth }, signal: AbortSignal.timeout(timeoutMs) });
    } catch {
      throw errors.upstreamRefused(upstream);
    }
    if (response.status === 404) return [];
    if (!response.ok) throw errors.upstreamRefused(upstream);
    const body = (await response.json().catch(() => undefined)) as { data?: unknown } | undefined;
    return Array.isArray(body?.data) ? body.data.filter(isModelObject) : [];
  };
}
