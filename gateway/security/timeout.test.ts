import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { deadlinePassed } from '../../common/deadline';
import { createLogger } from '../../common/logger';
import { errorHandler } from '../http-errors';
import { requestDeadline } from './timeout';

const MS = 200;

describe('requestDeadline', () => {
  let server: http.Server;
  let base: string;
  let release: () => void = () => {};
  const refusedLate: unknown[] = [];

  beforeAll(async () => {
    const app = express();
    app.use(requestDeadline(MS));
    // A read still running at the deadline; what it tries afterwards is refused.
    app.get('/read', async (req, res) => {
      await once(req.deadline!.signal, 'abort');
      try {
        req.deadline!.beginWrite();
      } catch (err) {
        refusedLate.push(err);
      }
      if (!res.headersSent) res.json({ late: true });
    });
    // A write that began in time and finishes after the deadline.
    app.post('/write', async (req, res) => {
      req.deadline!.beginWrite();
      await once(req.deadline!.signal, 'abort');
      res.status(201).json({ done: true });
    });
    // A write begun in time whose service refuses its second step past the deadline (as a subgraph does).
    app.post('/refused', async (req) => {
      req.deadline!.beginWrite();
      await once(req.deadline!.signal, 'abort');
      throw deadlinePassed();
    });
    // A write that has not finished when the gateway must answer.
    app.post('/stuck', async (req, res) => {
      req.idempotencyKey = 'key-1';
      req.deadline!.beginWrite();
      await new Promise<void>((resolve) => (release = resolve));
      if (!res.headersSent) res.status(201).json({ done: true });
    });
    app.use(errorHandler(createLogger('silent')));
    server = http.createServer(app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    release();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers a read at the deadline: nothing was changed, and nothing can begin writing afterwards', async () => {
    const res = await fetch(`${base}/read`);
    expect(res.status).toBe(503);
    expect(res.headers.get('x-request-outcome')).toBe('not-started');
    expect(((await res.json()) as { error: { message: string } }).error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: `The request was not completed within ${MS} ms; nothing was changed, and retrying is safe`,
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(refusedLate).toEqual([expect.objectContaining({ code: 'SERVICE_UNAVAILABLE' })]);
  });

  it('waits for a write that began in time and answers with its result', async () => {
    const res = await fetch(`${base}/write`, { method: 'POST' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ done: true });
  });

  it('passes on a refusal to begin a write past the deadline as not-started', async () => {
    const res = await fetch(`${base}/refused`, { method: 'POST' });
    expect(res.status).toBe(503);
    expect(res.headers.get('x-request-outcome')).toBe('not-started');
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/nothing was done/);
  });

  it('answers a write still running at twice the deadline with outcome unknown and the key to retry with', async () => {
    const res = await fetch(`${base}/stuck`, { method: 'POST' });
    expect(res.status).toBe(503);
    expect(res.headers.get('x-request-outcome')).toBe('unknown');
    expect(res.headers.get('idempotency-key')).toBe('key-1');
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/may still complete; retry with Idempotency-Key: key-1/);
  });
});
