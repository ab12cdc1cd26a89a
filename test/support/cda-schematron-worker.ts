import { parentPort } from 'node:worker_threads';
import { cdaSchematronErrors } from './cda-schematron';

/** The thread side of cda-schematron-thread.ts: one reply per document, its Schematron failures or the engine's error. */
parentPort!.on('message', ({ id, xml }: { id: number; xml: string }) => {
  try {
    parentPort!.postMessage({ id, errors: cdaSchematronErrors(xml) });
  } catch (e) {
    parentPort!.postMessage({ id, failure: String((e as Error).stack ?? e) });
  }
});
