import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { readJobModelId, readModelNameFields } from '../../../src/ownership/index.js';

/** The owner fields' type rules, as the 400 a client gets (the reading itself is held to python3 elsewhere). */

function refusal(read: () => unknown): unknown {
  try {
    return { read: read() };
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return err.toBody();
  }
}

const invalid = (param: string, message: string) => ({ error: { message, type: 'invalid_request_error', param, code: 'invalid_request' } });

describe('a model creation’s entity, project and name', () => {
  it('are strings, and entity may be null (the account’s default entity)', () => {
    expect(readModelNameFields(Buffer.from('{"entity":null,"project":"rl","name":"agent","base_model":"b"}'))).toEqual({ entity: null, project: 'rl', name: 'agent' });
    expect(readModelNameFields(Buffer.from('{"entity":"acme","project":"rl","name":"agent"}'))).toEqual({ entity: 'acme', project: 'rl', name: 'agent' });
  });

  it.each([
    ['{"entity":5,"project":"rl","name":"agent"}', 'entity'],
    ['{"entity":["acme"],"project":"rl","name":"agent"}', 'entity'],
    ['{"entity":"acme","project":null,"name":"agent"}', 'project'],
    ['{"entity":"acme","project":"rl","name":null}', 'name'],
    ['{"entity":"acme","project":"rl","name":true}', 'name'],
  ])('refuses %s: 400 naming %s', (body, param) => {
    expect(refusal(() => readModelNameFields(Buffer.from(body)))).toEqual(invalid(param, `The body's top-level "${param}" must be a string.`));
  });
});

describe('a training job’s model_id', () => {
  it('is a non-empty string', () => {
    expect(readJobModelId(Buffer.from('{"model_id":"m-1","trajectory_groups":[]}'))).toBe('m-1');
  });

  it.each(['5', 'null', '""', '["m-1"]', '{"id":"m-1"}'])('refuses model_id %s: 400 must be a non-empty string', (value) => {
    expect(refusal(() => readJobModelId(Buffer.from(`{"model_id":${value}}`)))).toEqual(invalid('model_id', 'The body\'s top-level "model_id" must be a non-empty string.'));
  });

  it.each(['{}', '{"x":{"model_id":"nested"}}', ''])('refuses %j as having no model_id', (body) => {
    expect(refusal(() => readJobModelId(Buffer.from(body)))).toEqual(invalid('model_id', 'The body has no top-level "model_id".'));
  });
});
