import type { IncomingMessage } from 'node:http';
import { errors, GatewayError } from '../errors.js';
import { ModelIdWatch, type OwnershipGuard } from '../ownership/index.js';
import { assertDeclaredLength, BodyLimitCounter, pathParam, type AnswerId, type OwnershipRule, type RouteSpec } from '../proxy/index.js';
import type { BodySettings } from './body.js';
import type { Caller, PreparedBody } from './values.js';

/**
 * What to do with the upstream's answer once ownership has been checked: a creation's 2xx is
 * read whole (it is small) to record its id before the client sees it — and replaced by a 409
 * (a model) or 404 when that id is another team's; an answer that names a resource
 * (`checksResponse`) is read whole and replaced by the 404 unless the caller owns it; a
 * deletion's 2xx releases the resource.
 */
export interface AnswerRule {
  /** Read the 2xx body before relaying it. */
  readonly buffered: boolean;
  /** Answers the error to send instead of the upstream's answer, if any. */
  settle(status: number, body: Buffer | undefined): Promise<GatewayError | undefined>;
}

const isSuccess = (status: number): boolean => status >= 200 && status < 300;
const pathOf = (url: string | undefined): string => (url ?? '/').split('?', 1)[0]!;

/**
 * The ownership step (SPEC 13.1, 13.2, 20), as the route's rule says, before limits are charged
 * and before anything is forwarded; answers what to do with the upstream's answer, if anything.
 * Off (`guard` undefined): nothing is checked or recorded. A `checksBody` field was checked as
 * the body was read (readGuardedUpload, the route's body reader).
 */
export async function checkOwnership(
  guard: OwnershipGuard | undefined,
  route: RouteSpec,
  req: IncomingMessage,
  caller: Caller,
  body: PreparedBody,
): Promise<AnswerRule | undefined> {
  const rule = route.ownership;
  if (!guard || !rule) return undefined;
  const owner = caller.project;
  let released: AnswerRule | undefined;
  if (rule.checks) {
    const { param, kind, release } = rule.checks;
    const id = pathParam(route.template, pathOf(req.url), param);
    if (id === undefined) throw errors.pathParamEncodingInvalid(param);
    await guard.checkResource(kind, id, owner, param);
    // Released before the client hears the answer: its next request already finds it gone.
    if (release) released = { buffered: true, settle: async (status) => void (isSuccess(status) && (await guard.release(kind, id))) };
  }
  if (rule.chatModel && body.chat) guard.checkChatModel(body.chat.model, owner);
  let artifact: string | undefined;
  if (rule.modelName) {
    assertUncompressed(req);
    artifact = guard.checkModelName(body.raw, owner);
  }
  const checked = rule.checksResponse === undefined ? undefined : checkedAnswer(guard, rule.checksResponse, caller);
  const created = rule.creates === undefined ? undefined : creationAnswer(guard, rule.creates, caller, artifact, route.template);
  return inTurn([released, checked, created]);
}

/**
 * The answer rules of one route, settled in turn (release, the answer's check, the creation);
 * the first refusal is the answer. One rule is itself; none is undefined.
 */
function inTurn(rules: ReadonlyArray<AnswerRule | undefined>): AnswerRule | undefined {
  const present = rules.filter((rule) => rule !== undefined);
  if (present.length <= 1) return present[0];
  return {
    buffered: true,
    async settle(status, answer) {
      for (const rule of present) {
        const refusal = await rule.settle(status, answer);
        if (refusal) return refusal;
      }
      return undefined;
    },
  };
}

/**
 * The body reader of a `checksBody` route while ownership is on (a job creation's `model_id`):
 * the upload is held until its top-level field is certain and names the caller's resource
 * (SPEC 13.1), then streams on.
 */
export function readGuardedUpload(guard: OwnershipGuard, req: IncomingMessage, caller: Caller, settings: BodySettings, rule: BodyFieldRule): Promise<PreparedBody> {
  // A declared length over the limit is refused before anything else, as for any upload.
  assertDeclaredLength(req, settings.streamBodyLimit);
  assertUncompressed(req);
  return admitGuardedUpload(guard, req, caller, settings, rule);
}

type BodyFieldRule = NonNullable<OwnershipRule['checksBody']>;

function creationAnswer(guard: OwnershipGuard, creation: AnswerId, caller: Caller, artifact: string | undefined, route: string): AnswerRule {
  const origin = { route };
  return {
    buffered: true,
    settle: async (status, answer) => (isSuccess(status) && answer ? guard.recordCreation(creation, answer, caller.project, artifact, origin) : undefined),
  };
}

/** A 2xx answer naming a resource (`checks-response`): read whole (bounded), replaced by the 404 unless it is the caller's. */
function checkedAnswer(guard: OwnershipGuard, named: AnswerId, caller: Caller): AnswerRule {
  return {
    buffered: true,
    settle: async (status, answer) => (isSuccess(status) && answer ? guard.checkAnswer(named, answer, caller.project) : undefined),
  };
}

/** The gateway reads a guarded body's bytes as sent: compressed ones, which an upstream might inflate first, it cannot read as the upstream would. */
function assertUncompressed(req: IncomingMessage): void {
  const encoding = req.headers['content-encoding'];
  if (encoding === undefined || encoding.trim().toLowerCase() === 'identity') return;
  throw errors.guardedBodyEncoded(encoding);
}

/**
 * A guarded upload (a training-job creation's `model_id`, a config route's `checks-body` field):
 * it streams through the watch, which holds it back (at most `server.bodyLimit`, counted in
 * `server.maxBufferedBytes`) until its first top-level field has been read, and the resource it
 * names must be the caller's; then it streams on, read to its end as the upstream will read it.
 * The upstream gets the last bytes only once the body is certain; if it is not (a later
 * duplicate of the field, a broken rest), the watch errors, the
 * upstream request is aborted before it is whole, and the client gets the 400.
 */
async function admitGuardedUpload(guard: OwnershipGuard, req: IncomingMessage, caller: Caller, settings: BodySettings, rule: BodyFieldRule): Promise<PreparedBody> {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
    throw errors.jobBodyNotObject(rule.field);
  }
  const counter = new BodyLimitCounter(settings.streamBodyLimit, settings.idleMs, req);
  // Held bytes count with the chat bodies: past server.maxBufferedBytes the upload is refused (503 overloaded).
  const watch = new ModelIdWatch(settings.bodyLimit, settings.budget, rule.field);
  counter.once('error', (err) => watch.destroy(err));
  req.once('close', () => {
    if (!req.complete) watch.destroy(errors.clientClosed());
  });
  req.pipe(counter).pipe(watch);
  try {
    const modelId = await watch.modelId;
    await guard.checkResource(rule.kind, modelId, caller.project, rule.field);
    // Read on while the model was checked: a refusal found meanwhile means nothing goes.
    if (watch.refused) throw watch.refused;
  } catch (err) {
    // Refused: the held body is dropped (and leaves the memory budget).
    watch.destroy();
    throw err;
  }
  return {
    open(onError) {
      watch.once('error', onError);
      // Refused or broken off after this step (while the limits were charged): nobody heard it yet.
      const failed = watch.refused ?? watch.errored;
      if (failed) process.nextTick(() => onError(failed));
      else watch.release();
      return watch;
    },
    release: () => undefined,
    get bytes() {
      return counter.bytes;
    },
  };
}
