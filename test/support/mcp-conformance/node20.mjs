// `node --import ./node20.mjs …/conformance/dist/index.js`: runs the conformance CLI on Node 20 (see hooks.mjs).
import { register } from 'node:module';
import fs from 'node:fs';

if (typeof fs.globSync !== 'function') register('./hooks.mjs', import.meta.url);
