// Jest test environment of the end-to-end project. The platform that test/harness.ts starts is loaded from dist/
// (which global setup has brought up to date) once per Jest worker, outside the per-file sandbox, instead of from
// source inside each file's sandbox: a cold load there cost every file 1.5–1.9 s of CPU. Each file still starts
// its own platforms on its own database; only the loaded code is shared.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

const dist = path.resolve(__dirname, '../../dist');
let loaded;
/** @type {Map<string, Uint8Array>} */
const sharedFiles = new Map();

/**
 * A file read once per worker straight into shared memory (the run's 44 MB snapshot tarball): every platform's
 * database thread then reads it in place. Read per file, it cost each file about 0.2 s of CPU, most of it the
 * kernel handing out fresh pages; copying a plain buffer into shared memory afterwards took twice as long.
 * @param {string} file
 */
function sharedFile(file) {
  let bytes = sharedFiles.get(file);
  if (!bytes) {
    const fd = fs.openSync(file, 'r');
    try {
      bytes = new Uint8Array(new SharedArrayBuffer(fs.fstatSync(fd).size));
      for (let offset = 0; offset < bytes.byteLength;) {
        const read = fs.readSync(fd, bytes, offset, bytes.byteLength - offset, offset);
        if (read === 0) throw new Error(`${file} ended before its ${bytes.byteLength} bytes`);
        offset += read;
      }
    } finally {
      fs.closeSync(fd);
    }
    sharedFiles.set(file, bytes);
  }
  return bytes;
}

function platformModules() {
  if (!loaded) {
    require('reflect-metadata');
    const load = (relative) => require(path.join(dist, relative));
    loaded = {
      platform: load('bin/platform'),
      database: load('common/db/database'),
      testBackends: load('common/db/test-backends'),
      tokens: load('common/auth/tokens'),
      // Any other module as the platform loaded it, for a test that hands it the platform's own objects.
      load,
      sharedFile,
      // The platform's realm: a Date it is handed must be one of its own (`instanceof Date` in the database drivers).
      Date,
    };
  }
  return loaded;
}

class EndToEndEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global.__caregraphPlatformModules = platformModules();
  }
}

module.exports = EndToEndEnvironment;
