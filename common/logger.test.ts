import pg from 'pg';
import { createLogger } from './logger';

/** The lines a logger wrote, parsed. */
function capture() {
  const lines: string[] = [];
  const logger = createLogger('info', 'test', { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

/**
 * A connection error as node-postgres's pool reports it: the failed client hung on the error
 * (`err.client`), holding the connection parameters and the backend's cancel key.
 */
function cutConnectionError(): Error {
  const client = new pg.Client({ connectionString: 'postgres://caregraph:pw-not-for-logs@db.internal:5432/care' });
  Object.assign(client, { processID: 48213, secretKey: 1928374650 });
  return Object.assign(new Error('Connection terminated unexpectedly'), { client });
}

describe('logging a database connection error', () => {
  const secrets = ['pw-not-for-logs', '1928374650', '48213', 'connectionParameters', 'secretKey', '"client"'];

  it('keeps the message and code and leaves out the client and its secrets', () => {
    const { logger, lines } = capture();
    const err = Object.assign(cutConnectionError(), { code: 'ECONNRESET' });
    logger.error({ err }, 'job queue error');
    const line = JSON.parse(lines[0]);
    expect(line.err).toMatchObject({ type: 'Error', message: 'Connection terminated unexpectedly', code: 'ECONNRESET' });
    for (const secret of secrets) expect(lines[0]).not.toContain(secret);
  });

  it('also when the error is a copy of its fields (how pg-boss re-emits a worker error) or a cause', () => {
    const { logger, lines } = capture();
    const err = cutConnectionError();
    logger.error({ err: { ...err, message: err.message, stack: err.stack, queue: 'deliver' } }, 'job queue error');
    logger.error({ err: new Error('send failed', { cause: err }) }, 'send failed');
    logger.error({ err: new AggregateError([err], 'every address failed') }, 'connect failed');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]).err).toMatchObject({ message: 'Connection terminated unexpectedly', queue: 'deliver' });
    expect(JSON.parse(lines[1]).err.message).toContain('Connection terminated unexpectedly');
    expect(JSON.parse(lines[2]).err.aggregateErrors[0].message).toBe('Connection terminated unexpectedly');
    for (const line of lines) for (const secret of secrets) expect(line).not.toContain(secret);
  });

  it('keeps the plain fields of other errors (a Prisma error’s code and meta)', () => {
    const { logger, lines } = capture();
    const err = Object.assign(new Error('Unique constraint failed'), { code: 'P2002', meta: { target: ['email'], modelName: 'Patient' }, at: new Date(0) });
    logger.error({ err }, 'write failed');
    expect(JSON.parse(lines[0]).err).toMatchObject({ code: 'P2002', meta: { target: ['email'], modelName: 'Patient' }, at: '1970-01-01T00:00:00.000Z' });
  });
});
