import { errors, type GatewayError } from '../errors.js';
import { pythonTopLevelMembers, type PyValue, type PythonReadLimits } from '../python-json/index.js';
import { StreamRefused, TopLevelStream, type StreamRefusal } from './top-level-stream.js';

/*
 * A guarded creation is decided on its owner fields (`model_id`; `entity`, `project`, `name`),
 * and the upstream acts on them as Python's `json.loads(raw_bytes)` reads them (SPEC 13.1). The
 * gateway reads them the same way or refuses the body: it never skips the check on a body it
 * could not read. Only strict UTF-8 without a BOM is read, so the bytes decode to one text on
 * both sides (Python would also take a BOM, UTF-16 and UTF-32, which the gateway refuses), and
 * that text goes through the Python-exact decoder (NaN, Infinity, escapes as Python reads them).
 */

/** Well inside Python's recursion limit (1000 frames, some already used by the server) and its int limit. */
const LIMITS: PythonReadLimits = { maxDepth: 500, maxIntDigits: 4300 };

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** How the refusals of one kind of body are worded. */
export interface OwnerFieldsWording {
  /** The refusal's `param` when the body as a whole cannot be read. */
  readonly bodyParam: string | null;
  /** The message when the body is not one JSON object as Python reads it. */
  readonly notAnObject: string;
}

/** The owner fields present in a body, each as Python reads it (a field absent from the body is absent here). */
export type OwnerFields = ReadonlyMap<string, PyValue>;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether the bytes are UTF-8 as Python will decode them: no BOM, and no NUL among the first four (Python would take UTF-16/32). */
function decodeUtf8(raw: Buffer): string | undefined {
  if (raw.subarray(0, 3).equals(BOM) || raw.subarray(0, 4).includes(0)) return undefined;
  try {
    return utf8.decode(raw);
  } catch {
    return undefined;
  }
}

/**
 * The body's top-level `keys` exactly as the upstream will read them; throws 400
 * `invalid_request` when that cannot be told with certainty: not UTF-8 (or with a BOM), not one
 * JSON object with nothing after it, one of `keys` written twice, a value not well-formed Unicode.
 */
export function readOwnerFields(raw: Buffer, keys: readonly string[], wording: OwnerFieldsWording): OwnerFields {
  const text = decodeUtf8(raw);
  if (text === undefined) throw errors.guardedBodyNotUtf8(wording.bodyParam);
  const read = pythonTopLevelMembers(text, new Set(keys), LIMITS);
  if (!read.ok) throw errors.guardedBodyNotObject(wording.notAnObject, wording.bodyParam);
  const fields = new Map<string, PyValue>();
  for (const [key, value] of read.members) {
    if (fields.has(key)) throw errors.fieldRepeated(key);
    // A lone surrogate (from a \ud800 escape) reads differently wherever the text is re-encoded.
    if (typeof value === 'string' && LONE_SURROGATE.test(value)) throw errors.fieldNotUnicode(key);
    fields.set(key, value);
  }
  return fields;
}

/** How the refusals of a body guarded by one top-level field are worded. */
const fieldBody = (field: string): OwnerFieldsWording => ({ bodyParam: field, notAnObject: `The body must be a JSON object with a top-level "${field}".` });
const MODEL_BODY: OwnerFieldsWording = { bodyParam: null, notAnObject: 'The body must be one JSON object.' };

/** The refusal of a streamed guarded body, worded as the whole-body reader words it. */
function jobRefusal(refusal: StreamRefusal, wording: OwnerFieldsWording): GatewayError {
  switch (refusal.kind) {
    case 'encoding':
      return errors.guardedBodyNotUtf8(wording.bodyParam);
    case 'syntax':
      return errors.guardedBodyNotObject(wording.notAnObject, wording.bodyParam);
    case 'duplicate':
      return errors.fieldRepeated(refusal.key);
    case 'surrogate':
      return errors.fieldNotUnicode(refusal.key);
  }
}

/**
 * Reads the top-level `model_id` of a training-job creation (or the `field` a config route's
 * `checks-body` names) as its body streams past, exactly as the upstream's Python will read the
 * whole body (SPEC 13.1), in memory that does not grow with the body. `modelId` is set once the
 * first top-level field has been read; the body is certain only once end() has returned: a
 * later duplicate, a NaN-laden rest Python reads differently or a broken end all make write()
 * or end() throw 400 `invalid_request`.
 */
export class JobModelIdReader {
  private found: string | undefined;
  private bytes = 0;
  private readonly wording: OwnerFieldsWording;
  private readonly stream: TopLevelStream;

  constructor(readonly field = 'model_id') {
    this.wording = fieldBody(field);
    this.stream = new TopLevelStream(new Set([field]), LIMITS, (_key, value) => {
      if (value === undefined || value === '') throw errors.modelIdNotString(field);
      this.found = value;
    });
  }

  /** The body's top-level `model_id`, once read (certain only after end()). */
  get modelId(): string | undefined {
    return this.found;
  }

  write(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    this.translate(() => this.stream.write(chunk));
  }

  /** The body has ended: throws unless it was read whole with one top-level `model_id`. */
  end(): string {
    if (this.bytes === 0) throw errors.modelIdMissing(this.field);
    this.translate(() => this.stream.end());
    if (this.found === undefined) throw errors.modelIdMissing(this.field);
    return this.found;
  }

  private translate(step: () => void): void {
    try {
      step();
    } catch (err) {
      throw err instanceof StreamRefused ? jobRefusal(err.refusal, this.wording) : err;
    }
  }
}

/** The top-level `model_id` of a training-job creation read whole, as the upstream reads it; 400 `invalid_request` unless certain. */
export function readJobModelId(raw: Buffer): string {
  const reader = new JobModelIdReader();
  reader.write(raw);
  return reader.end();
}

/** What a model creation names itself, as the upstream reads it. */
export interface ModelNameFields {
  readonly entity?: string | null;
  readonly project?: string;
  readonly name?: string;
}

/**
 * The `entity`, `project` and `name` of a model creation as the upstream reads them; 400
 * `invalid_request` unless certain, or when one is not a string (`entity` may be null): what the
 * upstream would make of a number or a list there is not the gateway's to guess.
 */
export function readModelNameFields(raw: Buffer): ModelNameFields {
  const fields = readOwnerFields(raw, ['entity', 'project', 'name'], MODEL_BODY);
  for (const [key, value] of fields) {
    if (typeof value === 'string' || (key === 'entity' && value === null)) continue;
    throw errors.fieldNotString(key);
  }
  return Object.fromEntries(fields) as ModelNameFields;
}
