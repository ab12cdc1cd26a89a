import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * cdaSchematronErrors on a thread of its own, in plain Node: inside Jest's module sandbox the XPath engine
 * runs about twice as slowly (measured), and off the test's thread it checks documents while the test goes
 * on. Documents are checked one after another, in the order sent.
 */
export class SchematronThread {
  private readonly worker = new Worker(join(__dirname, 'run-ts.js'), { argv: [join(__dirname, 'cda-schematron-worker.ts')] });
  private readonly pending = new Map<number, { resolve(errors: string[]): void; reject(error: Error): void }>();
  private nextId = 1;

  constructor() {
    this.worker.on('message', ({ id, errors, failure }: { id: number; errors?: string[]; failure?: string }) => {
      const pending = this.pending.get(id)!;
      this.pending.delete(id);
      if (failure === undefined) pending.resolve(errors!);
      else pending.reject(new Error(failure));
    });
    this.worker.on('error', (e) => this.failAll(e));
    this.worker.on('exit', (code) => this.failAll(new Error(`Schematron thread exited (code ${code})`)));
  }

  /** The document's Schematron failures, [] when it conforms. */
  errors(xml: string): Promise<string[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, xml });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private failAll(error: Error): void {
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }
}
