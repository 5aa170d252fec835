/**
 * node:stream/web, loaded when one of its exports is first read. The Lambda
 * bundles take this module in its place (esbuild's alias, `BUNDLE_ALIAS` in
 * infra/constructs/service-function.ts): @middy/core imports ReadableStream
 * at its top, to check a streamed response's body, and no function here
 * streams one; loading the web streams on import was about 2.5 ms of every
 * function's cold-start CPU.
 *
 * CommonJS on purpose: a bundle reads a CommonJS module's exports when the
 * importing code uses them (through these getters), where an ES module's
 * named exports are evaluated as it loads. The module comes from
 * `process.getBuiltinModule`, since a `require` of node:stream/web in a
 * bundle would be this module again.
 */
'use strict';

const NAMES = [
  'ReadableStream',
  'ReadableStreamDefaultReader',
  'ReadableStreamBYOBReader',
  'ReadableStreamBYOBRequest',
  'ReadableByteStreamController',
  'ReadableStreamDefaultController',
  'TransformStream',
  'TransformStreamDefaultController',
  'WritableStream',
  'WritableStreamDefaultWriter',
  'WritableStreamDefaultController',
  'ByteLengthQueuingStrategy',
  'CountQueuingStrategy',
  'TextEncoderStream',
  'TextDecoderStream',
  'CompressionStream',
  'DecompressionStream',
];

for (const name of NAMES) {
  Object.defineProperty(module.exports, name, {
    enumerable: true,
    get: () => process.getBuiltinModule('node:stream/web')[name],
  });
}
