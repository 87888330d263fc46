import { describe, expect, it } from 'vitest';
import { renderValidationBody, validateChatBody } from '../../../src/validation/index.js';

// Expected texts were produced by Python 3.11 json + pydantic 2.13 run through FastAPI's body
// handling and Starlette's JSONResponse encoding.

/** The 422 body FastAPI would send, or 'OK' when the body passes. */
function answer(body: string | Buffer, contentType: string | undefined = 'application/json'): string {
  const result = validateChatBody(Buffer.isBuffer(body) ? body : Buffer.from(body), contentType);
  return result.ok ? 'OK' : renderValidationBody(result.detail);
}

const NOT_AN_OBJECT = '"msg":"Input should be a valid dictionary or object to extract fields from"';

describe('validateChatBody: the SPEC 5 table', () => {
  it('answers missing with loc ["body"] and input null when there is no body', () => {
    expect(answer(Buffer.alloc(0))).toBe('{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}');
  });

  it('answers missing with loc ["body"] and input null when the body is JSON null', () => {
    expect(answer('null')).toBe('{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}');
  });

  it('answers json_invalid with Python\'s character offset and reason when the body is not JSON', () => {
    expect(answer('{"model": "m",')).toBe(
      '{"detail":[{"type":"json_invalid","loc":["body",14],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}]}',
    );
  });

  it('answers model_attributes_type echoing the body when the body is an array', () => {
    expect(answer('[1,"a"]')).toBe(`{"detail":[{"type":"model_attributes_type","loc":["body"],${NOT_AN_OBJECT},"input":[1,"a"]}]}`);
  });

  it('answers model_attributes_type echoing the body when the body is a string', () => {
    expect(answer('"hello"')).toBe(`{"detail":[{"type":"model_attributes_type","loc":["body"],${NOT_AN_OBJECT},"input":"hello"}]}`);
  });

  it('answers model_attributes_type echoing the body when the body is a number or a boolean', () => {
    expect(answer('42')).toBe(`{"detail":[{"type":"model_attributes_type","loc":["body"],${NOT_AN_OBJECT},"input":42}]}`);
    expect(answer('true')).toBe(`{"detail":[{"type":"model_attributes_type","loc":["body"],${NOT_AN_OBJECT},"input":true}]}`);
  });

  it('answers model_attributes_type with the raw body text when Content-Type is not JSON', () => {
    expect(answer('{"model":"m","messages":[]}', 'text/plain')).toBe(
      `{"detail":[{"type":"model_attributes_type","loc":["body"],${NOT_AN_OBJECT},"input":"{\\"model\\":\\"m\\",\\"messages\\":[]}"}]}`,
    );
  });

  it('answers 422 with loc ["body","model"] and the whole body as input when model is missing', () => {
    expect(answer('{"messages":[{"role":"user","content":"hi"}],"temperature":1.0}')).toBe(
      '{"detail":[{"type":"missing","loc":["body","model"],"msg":"Field required","input":{"messages":[{"role":"user","content":"hi"}],"temperature":1.0}}]}',
    );
  });

  it('answers 422 with loc ["body","messages"] and the whole body as input when messages is missing', () => {
    expect(answer('{"model":"m"}')).toBe(
      '{"detail":[{"type":"missing","loc":["body","messages"],"msg":"Field required","input":{"model":"m"}}]}',
    );
  });

  it('answers string_type when model is a number (no coercion) or null', () => {
    expect(answer('{"model":42,"messages":[]}')).toBe(
      '{"detail":[{"type":"string_type","loc":["body","model"],"msg":"Input should be a valid string","input":42}]}',
    );
    expect(answer('{"model":null,"messages":[]}')).toBe(
      '{"detail":[{"type":"string_type","loc":["body","model"],"msg":"Input should be a valid string","input":null}]}',
    );
  });

  it('answers list_type when messages is not an array', () => {
    expect(answer('{"model":"m","messages":{"role":"user"}}')).toBe(
      '{"detail":[{"type":"list_type","loc":["body","messages"],"msg":"Input should be a valid list","input":{"role":"user"}}]}',
    );
  });

  it('answers dict_type with loc ["body","messages",i] for each item that is not an object', () => {
    expect(answer('{"model":"m","messages":[{"role":"user"},"hi",[1]]}')).toBe(
      '{"detail":[{"type":"dict_type","loc":["body","messages",1],"msg":"Input should be a valid dictionary","input":"hi"},' +
        '{"type":"dict_type","loc":["body","messages",2],"msg":"Input should be a valid dictionary","input":[1]}]}',
    );
  });
});

describe('validateChatBody: several failures at once', () => {
  it('lists model before messages items, items in index order', () => {
    expect(answer('{"model":7,"messages":[1,{},"x"]}')).toBe(
      '{"detail":[{"type":"string_type","loc":["body","model"],"msg":"Input should be a valid string","input":7},' +
        '{"type":"dict_type","loc":["body","messages",0],"msg":"Input should be a valid dictionary","input":1},' +
        '{"type":"dict_type","loc":["body","messages",2],"msg":"Input should be a valid dictionary","input":"x"}]}',
    );
  });

  it('lists both missing fields for an empty object', () => {
    expect(answer('{}')).toBe(
      '{"detail":[{"type":"missing","loc":["body","model"],"msg":"Field required","input":{}},' +
        '{"type":"missing","loc":["body","messages"],"msg":"Field required","input":{}}]}',
    );
  });

  it('lists a missing model before a messages of the wrong type', () => {
    expect(answer('{"messages":5}')).toBe(
      '{"detail":[{"type":"missing","loc":["body","model"],"msg":"Field required","input":{"messages":5}},' +
        '{"type":"list_type","loc":["body","messages"],"msg":"Input should be a valid list","input":5}]}',
    );
  });

  it('exposes the same failures as data: type, loc, msg and the plain JS input', () => {
    const result = validateChatBody(Buffer.from('{"model":7,"messages":[1]}'), 'application/json');
    expect(result).toEqual({
      ok: false,
      detail: [
        { type: 'string_type', loc: ['body', 'model'], msg: 'Input should be a valid string', input: 7 },
        { type: 'dict_type', loc: ['body', 'messages', 0], msg: 'Input should be a valid dictionary', input: 1 },
      ],
    });
  });
});

describe('validateChatBody: Content-Type', () => {
  const modelMissing = '{"detail":[{"type":"missing","loc":["body","model"],"msg":"Field required","input":{"messages":[]}}]}';
  const rawText = `{"detail":[{"type":"model_attributes_type","loc":["body"],${NOT_AN_OBJECT},"input":"{\\"messages\\":[]}"}]}`;

  it('parses JSON for application/json with a charset parameter', () => {
    expect(answer('{"messages":[]}', 'application/json; charset=utf-8')).toBe(modelMissing);
  });

  it('parses JSON for application/*+json', () => {
    expect(answer('{"messages":[]}', 'application/vnd.api+json')).toBe(modelMissing);
  });

  it('parses JSON whatever the case of the media type', () => {
    expect(answer('{"messages":[]}', 'Application/JSON')).toBe(modelMissing);
  });

  it('parses JSON when Content-Type is missing, as FastAPI does', () => {
    expect(answer('{"messages":[]}', undefined)).toBe(modelMissing);
    expect(answer('{"model":"m","messages":[]}', undefined)).toBe('OK');
  });

  it('does not parse text/plain: the raw text is the input', () => {
    expect(answer('{"messages":[]}', 'text/plain')).toBe(rawText);
  });

  it('does not parse a list of media types, which Python reads as text/plain', () => {
    expect(answer('{"messages":[]}', 'application/json, text/plain')).toBe(rawText);
  });

  it('answers missing for an empty body whatever the Content-Type', () => {
    expect(answer('', 'text/plain')).toBe('{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}');
  });
});

describe('validateChatBody: valid bodies', () => {
  it('returns ok with the parsed body, extra fields kept', () => {
    const body = {
      model: 'wandb-artifact:///entity/project/name:step3',
      messages: [{ role: 'user', content: 'héllo 😀' }],
      temperature: 0.2,
      top_k: 40,
      chat_template_kwargs: { enable_thinking: false },
      stream: true,
    };
    expect(validateChatBody(Buffer.from(JSON.stringify(body)), 'application/json')).toEqual({ ok: true, body });
  });

  it('accepts an empty messages list', () => {
    expect(validateChatBody(Buffer.from('{"model":"m","messages":[]}'), 'application/json')).toEqual({
      ok: true,
      body: { model: 'm', messages: [] },
    });
  });

  it('accepts NaN, Infinity and -Infinity as Python does', () => {
    const result = validateChatBody(
      Buffer.from('{"model":"m","messages":[],"temperature":NaN,"a":Infinity,"b":-Infinity}'),
      'application/json',
    );
    expect(result).toEqual({ ok: true, body: { model: 'm', messages: [], temperature: NaN, a: Infinity, b: -Infinity } });
  });

  it('drops a UTF-8 byte order mark as json.loads does', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    expect(validateChatBody(Buffer.concat([bom, Buffer.from('{"model":"m","messages":[]}')]), 'application/json')).toEqual({
      ok: true,
      body: { model: 'm', messages: [] },
    });
    expect(answer(Buffer.concat([bom, Buffer.from('{"model":1,"messages":[]}')]))).toBe(
      '{"detail":[{"type":"string_type","loc":["body","model"],"msg":"Input should be a valid string","input":1}]}',
    );
  });

  it('reads UTF-16 bodies as json.detect_encoding does', () => {
    const utf16 = Buffer.from('\ufeff{"model":"m","messages":[]}', 'utf16le');
    expect(validateChatBody(utf16, 'application/json')).toEqual({ ok: true, body: { model: 'm', messages: [] } });
  });

  it('keeps the last value of a repeated key, as Python dicts do', () => {
    expect(answer('{"model":"m","model":3,"messages":[]}')).toBe(
      '{"detail":[{"type":"string_type","loc":["body","model"],"msg":"Input should be a valid string","input":3}]}',
    );
  });
});

describe('validateChatBody: echoed inputs render as Python renders them', () => {
  it('keeps key order, 1.0, Python float layout and big ints, and drops "_sa" keys like jsonable_encoder', () => {
    const body =
      '{"b":1,"2":0,"t":1.0,"e":1e16,"s":0.00001,"big":12345678901234567890123,"_sample":{"_sa":1,"k":-0.0},"messages":[]}';
    expect(answer(body)).toBe(
      '{"detail":[{"type":"missing","loc":["body","model"],"msg":"Field required",' +
        '"input":{"b":1,"2":0,"t":1.0,"e":1e+16,"s":1e-05,"big":12345678901234567890123,"messages":[]}}]}',
    );
  });

  it('writes non-ASCII as is and escapes controls as Python does', () => {
    expect(answer('{"model":"m\\n\\u0001\\"é","x":"\\u00e9"}')).toBe(
      '{"detail":[{"type":"missing","loc":["body","messages"],"msg":"Field required","input":{"model":"m\\n\\u0001\\"é","x":"é"}}]}',
    );
  });
});
