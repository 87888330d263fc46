import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../helpers/gateway.js';
import { KEYS, bearer } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/** Sends the path as written (fetch would resolve dot segments, encoded ones too, before sending). */
function send(port: number, probe: Probe): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: probe.method, path: probe.path, headers: probe.headers ?? {} }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(probe.body);
  });
}

/** One hostile request: what it sends, and the refusal the SPEC gives (status and the whole body). */
interface Probe {
  readonly spec: string;
  readonly what: string;
  readonly method: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly status: number;
  readonly answer: unknown;
}

const key = { authorization: bearer(KEYS.teamA) };
const json = { ...key, 'content-type': 'application/json' };
const CHAT = '/v1/chat/completions';
const detail = (...items: unknown[]) => ({ detail: items });
const fail = (message: string, type: string, code: string, param: string | null = null) => ({ error: { message, type, param, code } });

const PROBES: readonly Probe[] = [
  { spec: '5', what: 'no body', method: 'POST', path: CHAT, headers: json, status: 422, answer: detail({ type: 'missing', loc: ['body'], msg: 'Field required', input: null }) },
  { spec: '5', what: 'JSON null', method: 'POST', path: CHAT, headers: json, body: 'null', status: 422, answer: detail({ type: 'missing', loc: ['body'], msg: 'Field required', input: null }) },
  { spec: '5', what: 'a JSON array', method: 'POST', path: CHAT, headers: json, body: '[1]', status: 422, answer: detail({ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: [1] }) },
  { spec: '5', what: 'text/plain body', method: 'POST', path: CHAT, headers: { ...key, 'content-type': 'text/plain' }, body: '{"model":"m","messages":[]}', status: 422, answer: detail({ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: '{"model":"m","messages":[]}' }) },
  { spec: '5', what: 'model and messages of the wrong types, an item not an object', method: 'POST', path: CHAT, headers: json, body: '{"model":7,"messages":[{},"x"]}', status: 422, answer: detail({ type: 'string_type', loc: ['body', 'model'], msg: 'Input should be a valid string', input: 7 }, { type: 'dict_type', loc: ['body', 'messages', 1], msg: 'Input should be a valid dictionary', input: 'x' }) },
  { spec: '5', what: 'messages not a list', method: 'POST', path: CHAT, headers: json, body: '{"model":"m","messages":"hi"}', status: 422, answer: detail({ type: 'list_type', loc: ['body', 'messages'], msg: 'Input should be a valid list', input: 'hi' }) },
  { spec: '5', what: 'model missing', method: 'POST', path: CHAT, headers: json, body: '{"messages":[]}', status: 422, answer: detail({ type: 'missing', loc: ['body', 'model'], msg: 'Field required', input: { messages: [] } }) },
  { spec: '6', what: 'no credentials', method: 'POST', path: CHAT, headers: { 'content-type': 'application/json' }, body: '{"model":"m","messages":[]}', status: 401, answer: fail('Missing API key: send it as "Authorization: Bearer <key>".', 'authentication_error', 'invalid_api_key') },
  { spec: '6', what: 'a malformed project header', method: 'POST', path: CHAT, headers: { ...json, 'openai-project': 'team-a/../b' }, body: '{"model":"m","messages":[]}', status: 400, answer: fail('Invalid OpenAI-Project header: expected "<team>/<project>", each 1-128 characters of A-Z a-z 0-9 . _ -.', 'invalid_request_error', 'invalid_project', 'OpenAI-Project') },
  { spec: '16', what: 'another team in the project header', method: 'POST', path: CHAT, headers: { ...json, 'openai-project': 'team-b/p' }, body: '{"model":"m","messages":[]}', status: 403, answer: fail('This key belongs to team "team-a" and cannot act for team "team-b".', 'permission_error', 'project_forbidden', 'OpenAI-Project') },
  { spec: '16', what: 'a /v1 key on /admin', method: 'DELETE', path: '/admin/teams/team-a', headers: key, status: 403, answer: fail('This key is not an admin key; /admin routes need a key from auth.admin.keys.', 'permission_error', 'admin_required') },
  { spec: '17', what: 'a /v1 key as a console session cookie', method: 'POST', path: '/admin/keys', headers: { cookie: `tollgate_session=${KEYS.teamA}`, 'content-type': 'application/json' }, body: '{"team":"team-a"}', status: 401, answer: fail('No console session: it expired or was signed out; sign in again.', 'authentication_error', 'invalid_api_key') },
  { spec: '9', what: 'bad percent-encoding in the path', method: 'GET', path: '/v1/models/%E0%A4%A', headers: key, status: 400, answer: fail('The request path is not valid percent-encoding: each % must start a %XX escape of UTF-8 bytes.', 'invalid_request_error', 'invalid_path') },
  { spec: '20', what: 'an encoded slash in a path parameter', method: 'GET', path: '/v1/projects/team-a%2F..%2Fteam-b/runs', headers: key, status: 400, answer: fail('The request path contains an encoded slash, which is not allowed.', 'invalid_request_error', 'invalid_path') },
  { spec: '20', what: 'a dot segment', method: 'GET', path: '/v1/runs/../admin', headers: key, status: 400, answer: fail('The request path contains a "." or ".." segment, which is not allowed.', 'invalid_request_error', 'invalid_path') },
  { spec: '20', what: 'an encoded dot segment', method: 'GET', path: '/v1/runs/%2E%2E/admin', headers: key, status: 400, answer: fail('The request path contains a "." or ".." segment, which is not allowed.', 'invalid_request_error', 'invalid_path') },
  { spec: '13', what: 'a NUL in a path parameter', method: 'GET', path: '/v1/runs/a%00b', headers: key, status: 400, answer: fail('The request path contains an encoded NUL (%00), which is not allowed.', 'invalid_request_error', 'invalid_path') },
  { spec: '15', what: 'a bearer of 10 kB of garbage', method: 'GET', path: '/v1/models', headers: { authorization: `Bearer ${'x'.repeat(10_000)}` }, status: 401, answer: fail('Incorrect API key provided.', 'authentication_error', 'invalid_api_key') },
];

describe('hostile probes: each refusal with the SPEC\'s status and body, nothing forwarded, no 500', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it.each(PROBES.map((probe) => [`SPEC ${probe.spec}: ${probe.what}`, probe] as const))('%s', async (_name, probe) => {
    const before = stack.service.started + stack.inference.started;
    const { status, text } = await send(stack.gw.port, probe);
    expect(status).toBe(probe.status);
    expect(JSON.parse(text)).toEqual(probe.answer);
    expect(stack.service.started + stack.inference.started - before).toBe(0);
  });

  it('still serves a good chat after every probe', async () => {
    const { status } = await send(stack.gw.port, { spec: '5', what: 'a good chat', method: 'POST', path: CHAT, headers: json, body: '{"model":"m","messages":[]}', status: 200, answer: null });
    expect(status).toBe(200);
  });
});
