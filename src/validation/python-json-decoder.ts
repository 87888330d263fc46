// Moved to python-json/decoder.ts. Kept only while src/ownership/owner-fields.ts imports this
// path: once it imports from validation/index.js, delete this file.
export * from './python-json/decoder.js';
