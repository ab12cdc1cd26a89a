import { isDatabaseUnavailable } from './unavailable';

describe('isDatabaseUnavailable', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it.each([
    ['a refused connection (node-postgres)', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET')],
    ['an admin shutdown (57P01)', withCode('57P01', 'terminating connection due to administrator command')],
    ['a server starting up (57P03)', withCode('57P03', 'the database system is starting up')],
    ['a connection exception (class 08)', withCode('08006')],
    ['a cut connection without a code', new Error('Connection terminated unexpectedly')],
    ['a pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ["Prisma's P1001", Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: 'P1001', meta: {} })],
    ["Prisma's P1017", Object.assign(new Error('Server has closed the connection.'), { code: 'P1017' })],
    [
      "Prisma's P2028 for a transaction that waited its whole maxWait",
      withCode('P2028', 'Invalid `tx.consent.findMany()` invocation:\n\nTransaction API error: Unable to start a transaction in the given time.'),
    ],
    ["Prisma's P2024 pool timeout", Object.assign(new Error('Timed out fetching a new connection from the connection pool.'), { code: 'P2024' })],
    [
      'a driver adapter error inside a Prisma error',
      Object.assign(new Error('Database error'), {
        code: 'P2010',
        meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'ConnectionClosed' } } },
      }),
    ],
    ['a cause chain', new Error('send failed', { cause: withCode('ECONNREFUSED') })],
    ['an AggregateError of connect attempts', Object.assign(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]), { code: undefined })],
  ])('recognises %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('Unique constraint failed'), { code: 'P2002' })],
    ['a SQL error', withCode('42P01', 'relation "x" does not exist')],
    ["Prisma's P2028 for a transaction that ran past its timeout", withCode('P2028', 'Transaction API error: Transaction already closed: timeout.')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a non-error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('leaves %s alone', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
