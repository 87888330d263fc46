/**
 * Python's `json` as FastAPI runs it: reading bytes the way `json.loads` does (encodings, NaN,
 * the last duplicate key) and writing values back the way `json.dumps` does. Validation,
 * ownership and metering all read request bodies through it, so they agree with the backend.
 */
export { decodePythonJson, pythonJsonError, pythonTopLevelMembers, type PythonReadLimits } from './decoder.js';
export { pythonFloatRepr, renderFastApiJson, renderFastApiJsonWithin } from './encoder.js';
export { jsonParseKeepsPythonValues } from './exact-parse.js';
export { detectJsonEncoding } from './detect-encoding.js';
export { withTopLevelString } from './member-value.js';
export { PyFloat, PyInt, toJsValue, type PyDict, type PyValue } from './value.js';
