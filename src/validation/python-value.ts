// Moved to python-json/value.ts. Kept only while src/ownership/owner-fields.ts imports this
// path: once it imports from validation/index.js, delete this file.
export * from './python-json/value.js';
