import net from 'node:net';
import { ERROR_STATUS, isErrorCode } from '../common/errors';
import { RATE_LIMIT_CATEGORIES } from '../common/config';
import { startTestPlatform, backendName, type TestPlatform } from './harness';

/**
 * Generated hostile requests against the REST paths, FHIR, openEHR and
 * /graphql, sent as raw bytes (so invalid UTF-8, NUL bytes, CR/LF in headers
 * and malformed HTTP get through the client). Every answer must be a 4xx in the contract's vocabulary,
 * never a 5xx, and the process must stay healthy. Reproducible: a fixed
 * seed; FUZZ_SEED and FUZZ_COUNT make larger or different runs (docs/security.md).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const COUNT = Number(process.env.FUZZ_COUNT ?? 2000);
const CONCURRENCY = 8;

/** mulberry32: a small, well-known 32-bit PRNG; the same seed gives the same requests. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  return { next, int, pick };
}
type Rng = ReturnType<typeof prng>;

interface FuzzRequest {
  kind: string;
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body?: Buffer;
  /** Sent as is instead of being assembled (malformed HTTP). */
  raw?: Buffer;
}

const WEIRD_STRINGS = [
  '',
  ' ',
  '../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f%2e%2e%2f',
  "' OR 1=1 --",
  '"; DROP TABLE messages; --',
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '\u0000',
  '\ud800',
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  '😀'.repeat(50),
  'ｐ－１００１',
  'x'.repeat(5000),
  'p-1001\r\nX-Injected: 1',
  '__proto__',
  'constructor',
  '1e309',
  '-0',
  'NaN',
];
const WEIRD_VALUES: unknown[] = [
  null,
  true,
  -1,
  0,
  1.5,
  1e308,
  -1e308,
  // eslint-disable-next-line no-loss-of-precision -- deliberately past 2^53: the API must cope with the rounded value
  9007199254740993,
  2 ** 31,
  '9'.repeat(400),
  [],
  {},
  [null],
  { $gt: '' },
  { __proto__: { admin: true } },
  ...WEIRD_STRINGS,
];

const ID_PATHS = [
  ['GET', '/v1/messages/{id}'],
  ['GET', '/v1/patients/{id}'],
  ['GET', '/v1/templates/{id}'],
  ['GET', '/api/ehr/patients/{id}'],
  ['PATCH', '/v1/patients/{id}/preferences'],
  ['POST', '/v1/appointments/{id}/remind'],
  ['GET', '/v1/webhooks/{id}'],
  ['GET', '/api/ehr/patients/{id}/compositions'],
  ['GET', '/api/ehr/compositions/{id}'],
  ['GET', '/api/ehr/compositions/{id}/history'],
  ['PUT', '/api/ehr/compositions/{id}'],
  ['DELETE', '/api/ehr/compositions/{id}'],
] as const;
const BODY_PATHS = [
  ['POST', '/v1/messages'],
  ['POST', '/v1/messages/batch'],
  ['PATCH', '/v1/patients/p-1001/preferences'],
  ['POST', '/v1/appointments/appt-1001/remind'],
  ['POST', '/v1/webhooks'],
  ['POST', '/api/ehr/compositions'],
  ['POST', '/graphql'],
] as const;
const QUERY_PARAMS = [
  '/v1/messages?limit=-1',
  '/v1/messages?limit=0',
  '/v1/messages?limit=101',
  '/v1/messages?limit=1e3',
  '/v1/messages?limit=abc',
  '/v1/messages?limit=1&limit=2',
  '/v1/messages?limit[]=1',
  '/v1/messages?limit[a]=1',
  '/v1/messages?offset=-5',
  '/v1/messages?offset=99999999999999999999',
  '/v1/messages?unknown=1',
  '/v1/messages?patientId[$ne]=x',
  '/v1/appointments?from=yesterday',
  '/v1/appointments?from=2026-13-40',
  '/v1/appointments?from=2026-12-01&to=2026-11-01',
  '/v1/appointments?from=2020-01-01&to=2026-01-01',
  '/v1/appointments?from=%00',
  '/v1/templates?x=%ff%fe',
  '/v1/patients/p-1001?debug=true',
  '/api/ehr/audit?limit=-1',
  '/api/ehr/audit?from=notadate',
  '/api/ehr/audit?entityType[]=x',
];
const GRAPHQL_QUERIES = [
  '{',
  '}',
  'query { messages(limit: "ten") { pagination { total } } }',
  '{ messages(limit: 99999999999999999999) { pagination { total } } }',
  '{ messages(limit: -1) { pagination { total } } }',
  '{ message(id: null) { id } }',
  '{ noSuchField }',
  '{ patient(id: "p-1001") { noSuchField } }',
  '{ patient { id } }',
  'mutation { __typename',
  'subscription { events { id } }',
  'query Q($l: Int) { messages(limit: $l) { pagination { total } } }',
  'query Q($id: ID!) { patient(id: $id) { id } }',
  'query A { __typename } query B { __typename }',
  '{ ' + '{'.repeat(3000) + ' }',
  `{ ${'a: __typename '.repeat(2000)} }`,
  '{ templates { data { id } } } fragment F on Query { ...F }',
  '{ ...F } fragment F on Nope { id }',
  '{ template(id: "\\u0000\\ud800") { id } }',
];

/** Every path the fuzzer knows, on every API (REST, FHIR, openEHR, GraphQL), for the NUL and invalid UTF-8 cases. */
const ALL_PATHS: ReadonlyArray<readonly [string, string]> = [
  ...ID_PATHS.map(([method, path]) => [method, path.replace('{id}', 'p-1001')] as const),
  ...BODY_PATHS,
  ['GET', '/v1/messages'],
  ['GET', '/v1/templates'],
  ['GET', '/v1/appointments'],
  ['GET', '/api/ehr/audit'],
  ['POST', '/v1/inbound/sms'],
  ['POST', '/v1/simulator/replies'],
  ['GET', '/fhir/R4/metadata'],
  ['GET', '/fhir/R4/Patient'],
  ['GET', '/fhir/R4/Observation'],
  ['GET', '/fhir/R4/Patient/p-1001'],
  ['GET', '/fhir/R4/Patient/p-1001/$everything'],
  ['POST', '/fhir/R4/Patient'],
  ['PUT', '/fhir/R4/Patient/p-1001'],
  ['POST', '/fhir/R4/Patient/_search'],
  ['GET', '/openehr/v1/ehr'],
  ['POST', '/openehr/v1/ehr'],
  ['GET', '/openehr/v1/ehr/ehr-p-1001'],
  ['POST', '/openehr/v1/ehr/ehr-p-1001/composition'],
  ['POST', '/openehr/v1/query/aql'],
  ['POST', '/openehr/v1/definition/template/adl1.4'],
  ['GET', '/graphql'],
];
/** Query parameters each path reads, so a bad value reaches past "unknown parameter" checks. */
const PARAM_OF: Record<string, string> = {
  '/v1/messages': 'patientId',
  '/v1/appointments': 'from',
  '/api/ehr/audit': 'entityId',
  '/fhir/R4/Patient': 'name',
  '/fhir/R4/Observation': 'code',
  '/openehr/v1/ehr': 'subject_id',
  '/graphql': 'query',
};
/** NUL, overlong NUL, lone surrogates, truncated and impossible sequences, percent-encoded. */
const BAD_ESCAPES = ['%00', 'a%00b', '%c0%80', '%ed%a0%80', '%ff', '%fe%ff', '%c3', '%e2%82', '%f8%88%80%80%80'];
/** In a JSON string: NUL, lone surrogates (escaped) and raw invalid UTF-8 bytes. */
const BAD_JSON_TEXT: Buffer[] = [
  Buffer.from('\\u0000'),
  Buffer.from('p-1001\\u0000'),
  Buffer.from('\\ud800'),
  Buffer.from('x\\udfffy'),
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0xc0, 0x80]),
];

function generate(rng: Rng, token: string): FuzzRequest {
  // /api/ehr needs X-Tenant-Id: give it, so requests reach past the tenant check.
  const auth: Array<[string, string]> = [
    ['Authorization', `Bearer ${token}`],
    ['X-Tenant-Id', 'demo'],
  ];
  const json: Array<[string, string]> = [...auth, ['Content-Type', 'application/json']];
  const text = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
  switch (rng.int(10)) {
    case 0: {
      // Path traversal, injection and unicode in ids; raw bytes, including invalid UTF-8 and encoded slashes.
      const [method, template] = rng.pick(ID_PATHS);
      const id = rng.pick([
        [...Buffer.from(rng.pick(WEIRD_STRINGS.filter(Boolean)))].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join(''),
        rng.pick(['..', '..%2F..%2Fetc', '%2e%2e', '%ff%fe', '%c0%ae%c0%ae', '%', '%zz', 'a%00b', 'p-1001;rm', 'p-1001%0d%0aX-Injected:1']),
        'p-' + '9'.repeat(rng.int(300) + 1),
      ]);
      return {
        kind: 'path-id',
        method,
        path: template.replace('{id}', id),
        headers: method === 'GET' ? auth : json,
        body: method === 'GET' ? undefined : text({}),
      };
    }
    case 1:
      return { kind: 'query-params', method: 'GET', path: rng.pick(QUERY_PARAMS), headers: auth };
    case 2: {
      // Wrong types and huge numbers in every field a body might have.
      const [method, path] = rng.pick(BODY_PATHS);
      const fields = [
        'patientId',
        'templateId',
        'channel',
        'variables',
        'messages',
        'channels',
        'language',
        'quietHours',
        'url',
        'events',
        'secret',
        'ehrId',
        'content',
        'query',
        'variables',
        'extensions',
      ];
      const body: Record<string, unknown> = {};
      for (let i = rng.int(4) + 1; i > 0; i--) body[rng.pick(fields)] = rng.pick(WEIRD_VALUES);
      return {
        kind: 'wrong-types',
        method,
        path,
        headers: json,
        body: text(path === '/graphql' ? { ...body, query: 'query($x: String) { __typename }' } : body),
      };
    }
    case 3: {
      // Deeply nested JSON (arrays or objects), as a body or as GraphQL variables.
      const [method, path] = rng.pick(BODY_PATHS);
      const depth = rng.pick([100, 1000, 10_000, 100_000]);
      const nested = rng.next() < 0.5 ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      const body = path === '/graphql' ? `{"query":"query($v: String) { __typename }","variables":{"v":${nested}}}` : `{"messages":${nested}}`;
      return { kind: 'nested-json', method, path, headers: json, body: Buffer.from(body) };
    }
    case 4: {
      // Broken or non-JSON bodies: truncated, invalid UTF-8, wrong content type, wrong charset.
      const [method, path] = rng.pick(BODY_PATHS);
      const variant = rng.int(5);
      const bytes = [
        Buffer.from('{"patientId": "p-1001", '),
        Buffer.concat([Buffer.from('{"patientId":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from('"}')]),
        Buffer.from('patientId=p-1001&channel=sms'),
        Buffer.from('\ufeff{"a":1}'),
        Buffer.from(JSON.stringify({ query: '{ __typename }' })),
      ][variant];
      const type = rng.pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/xml', '']);
      return {
        kind: 'bad-body',
        method,
        path,
        headers: type ? [...auth, ['Content-Type', type]] : auth,
        body: variant === 4 && type === 'application/json' ? Buffer.from('[1,') : bytes,
      };
    }
    case 5: {
      // Header injection and malformed header values, sent raw so CR/LF, NUL and bytes > 0x7f reach the server.
      const [method, path] = rng.pick([...ID_PATHS.map(([m, p]) => [m, p.replace('{id}', 'p-1001')] as const), ['POST', '/graphql'] as const]);
      const name = rng.pick(['X-Tenant-Id', 'X-Request-Id', 'Idempotency-Key', 'X-Change-Reason', 'Authorization', 'Content-Type', 'X-Forwarded-For']);
      const value = rng.pick([
        'demo\r\nX-Injected: 1',
        'demo\nSet-Cookie: a=b',
        'de\u0000mo',
        'd\u00e9mo',
        '\u00ff\u00fe',
        'x'.repeat(20_000),
        'acme',
        '../demo',
        '',
        'Bearer',
        'Basic YTpi',
      ]);
      const line = Buffer.concat([
        Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: fuzz\r\nAuthorization: Bearer ${token}\r\n${name}: `),
        Buffer.from(value, 'latin1'),
        Buffer.from('\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'),
      ]);
      return { kind: 'header-injection', method, path, headers: [], raw: line };
    }
    case 6: {
      // Malformed GraphQL documents, variables and extensions.
      const query = rng.pick(GRAPHQL_QUERIES);
      // Variables of the wrong type (an Int that is not one, an ID that is an object), or not an object at all.
      const variables = rng.pick([
        { l: rng.pick(['1', 1.5, 2 ** 31, 1e308, {}, [1], true]), id: rng.pick([{}, [], [null], true, 1.5]) },
        'not-an-object',
        [1, 2],
        42,
      ]);
      const extras = rng.pick([
        {},
        { operationName: rng.pick(['Nope', 42, null]) },
        { extensions: { persistedQuery: { version: rng.pick([1, 2, 'x']), sha256Hash: rng.pick(['00', 'zz', 42]) } } },
      ]);
      const body = rng.next() < 0.1 ? rng.pick([[], 42, 'string', null, { query: 42 }, { query: ['{ __typename }'] }]) : { query, variables, ...extras };
      return { kind: 'graphql', method: 'POST', path: '/graphql', headers: json, body: text(body) };
    }
    case 7: {
      // Missing, expired-looking or forged credentials; foreign or malformed tenants.
      const [method, path] = rng.pick(ID_PATHS.map(([m, p]) => [m, p.replace('{id}', 'p-1001')] as const));
      const authorization = rng.pick([
        '',
        'Bearer',
        'Bearer ' + 'a'.repeat(5000),
        `Bearer ${token}x`,
        `Bearer ${token.split('.').slice(0, 2).join('.')}.`,
        'Basic ZGVtbzpkZW1v',
        `bearer  ${token} extra`,
        'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
      ]);
      const tenant = rng.pick([undefined, 'acme', 'nope', '', '*', 'demo,acme']);
      const headers: Array<[string, string]> = authorization ? [['Authorization', authorization]] : [];
      if (tenant !== undefined) headers.push(['X-Tenant-Id', tenant]);
      if (method !== 'GET') headers.push(['Content-Type', 'application/json']);
      return { kind: 'credentials', method, path, headers, body: method === 'GET' ? undefined : text({}) };
    }
    case 8: {
      // NUL bytes and invalid UTF-8 on every known path: in the path, the query string or the body.
      const [method, path] = rng.pick(ALL_PATHS);
      const escape = rng.pick(BAD_ESCAPES);
      const where = method === 'GET' ? rng.int(2) : rng.int(3);
      if (where === 0) {
        const segments = path.split('/');
        segments[segments.length - 1] = `${segments[segments.length - 1]}${escape}`;
        return { kind: 'nul-utf8', method, path: segments.join('/'), headers: method === 'GET' ? auth : json, body: method === 'GET' ? undefined : text({}) };
      }
      if (where === 1) {
        const param = PARAM_OF[path] ?? 'q';
        const extra = path === '/openehr/v1/ehr' ? '&subject_namespace=caregraph' : '';
        return {
          kind: 'nul-utf8',
          method,
          path: `${path}?${param}=${escape}${extra}`,
          headers: method === 'GET' ? auth : json,
          body: method === 'GET' ? undefined : text({}),
        };
      }
      const field = rng.pick(['patientId', 'templateId', 'name', 'query', 'q', 'body', 'From', 'messageId', 'url', 'id']);
      const bad = rng.pick(BAD_JSON_TEXT);
      const body =
        path === '/graphql'
          ? rng.pick([
              Buffer.concat([Buffer.from('{"query":"{ patients(search: \\"'), bad, Buffer.from('\\") { data { id } } }"}')]),
              Buffer.concat([Buffer.from('{"query":"query($s: String) { patients(search: $s) { data { id } } }","variables":{"s":"'), bad, Buffer.from('"}}')]),
            ])
          : Buffer.concat([Buffer.from(`{"resourceType":"Patient","${field}":"`), bad, Buffer.from('"}')]);
      return { kind: 'nul-utf8', method, path, headers: json, body };
    }
    default: {
      // Unknown methods and routes, odd request targets.
      const method = rng.pick(['DELETE', 'PUT', 'TRACE', 'OPTIONS', 'PROPFIND', 'GET']);
      const path = rng.pick([
        '/v1',
        '/v1/',
        '/v1/messages/a/b/c',
        '/api/ehr/../v1/messages',
        '/v1//messages',
        '/%2e%2e/healthz',
        '/v1/messages%00',
        `/v1/${'a/'.repeat(500)}`,
        '/graphql/x',
        '/v2/messages',
      ]);
      return { kind: 'routes', method, path, headers: auth };
    }
  }
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function send(url: string, request: FuzzRequest): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  let bytes = request.raw;
  if (!bytes) {
    const head = [`${request.method} ${request.path} HTTP/1.1`, 'Host: fuzz', 'Connection: close', ...request.headers.map(([k, v]) => `${k}: ${v}`)];
    if (request.body) head.push(`Content-Length: ${request.body.length}`);
    bytes = Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n', 'latin1'), request.body ?? Buffer.alloc(0)]);
  }
  return new Promise((resolve, reject) => {
    // Written without a half-close: Node's server drops in-flight requests of clients that end their side.
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    const finish = (err?: Error) => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(err ?? new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      let body = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    };
    // The server may answer (413, 415) and close before reading a whole body: the answer still counts.
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish());
  });
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const end = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, end), 16);
    if (!size) return out;
    out += rest.slice(end + 2, end + 2 + size);
    rest = rest.slice(end + 2 + size + 2);
  }
}

/** What is wrong with an answer, or undefined when it is a proper refusal. */
function problem(request: FuzzRequest, answer: RawAnswer): string | undefined {
  if (answer.status >= 500) return `status ${answer.status}`;
  if ('x-injected' in answer.headers || 'set-cookie' in answer.headers) return 'an injected header came back';
  // A harmless header (an ignored X-Forwarded-For, an empty X-Tenant-Id) may leave a valid request valid.
  if (request.kind === 'header-injection' && answer.status < 300) return undefined;
  let body: any;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return `status ${answer.status}, non-JSON body ${JSON.stringify(answer.body.slice(0, 100))}`;
  }
  if (/stack|at \S+ \(|node_modules|SELECT |prisma/i.test(answer.body)) return 'internals leaked in the body';
  // NUL bytes and invalid UTF-8 are refused as such, before anything else looks at them.
  if (request.kind === 'nul-utf8') {
    const code = request.path.startsWith('/fhir/') ? body?.issue?.[0]?.details?.text : (body?.error?.code ?? body?.errors?.[0]?.extensions?.code);
    if (answer.status !== 400 || code !== 'VALIDATION_ERROR') return `status ${answer.status} ${code}, not 400 VALIDATION_ERROR`;
  }
  // FHIR answers every refusal as an OperationOutcome naming the contract's code.
  if (request.path.startsWith('/fhir/')) {
    const code = body?.issue?.[0]?.details?.text;
    if (body?.resourceType !== 'OperationOutcome' || !isErrorCode(code)) return `not an OperationOutcome: ${answer.body.slice(0, 100)}`;
    return ERROR_STATUS[code] === answer.status ? undefined : `code ${code} with status ${answer.status}`;
  }
  // GraphQL: refusals come as `errors` (HTTP 400, or 200 when a resolver refused), each with a contract code.
  if (request.path.startsWith('/graphql') && Array.isArray(body?.errors) && body.errors.length > 0) {
    for (const error of body.errors) {
      const code = error?.extensions?.code;
      if (!isErrorCode(code) || ERROR_STATUS[code] >= 500) return `GraphQL error code ${code}`;
    }
    return undefined;
  }
  // A batch answers 200 with an error per item (docs/api.md §5): bad items must all be refused, none stored.
  if (request.path === '/v1/messages/batch' && answer.status === 200) return body?.accepted === 0 ? undefined : `batch accepted ${body?.accepted} bad items`;
  if (answer.status < 400) return `status ${answer.status} (accepted a bad request)`;
  const code = body?.error?.code;
  if (!isErrorCode(code) || typeof body.error.message !== 'string') return `not the contract body: ${answer.body.slice(0, 100)}`;
  if (ERROR_STATUS[code] !== answer.status) return `code ${code} with status ${answer.status}`;
  return undefined;
}

describe(`fuzz: ${COUNT} generated bad requests, seed ${SEED} (${backendName})`, () => {
  let t: TestPlatform;
  beforeAll(async () => {
    // Limits out of the way: a 429 would hide what the request reaches.
    const unlimited = Object.fromEntries(Object.keys(RATE_LIMIT_CATEGORIES).map((c) => [`RATE_LIMIT_${c}`, '100000000']));
    t = await startTestPlatform(unlimited);
  });
  afterAll(() => t?.stop());

  it('[SEC-016] answers every one with a 4xx in the contract vocabulary and stays healthy', async () => {
    const rng = prng(SEED);
    const token = await t.token({ sub: 'fuzzer', roles: ['clinician'] });
    const requests = Array.from({ length: COUNT }, () => generate(rng, token));
    const failures: string[] = [];
    const kinds = new Map<string, number>();
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const index = next++;
        const request = requests[index];
        kinds.set(request.kind, (kinds.get(request.kind) ?? 0) + 1);
        try {
          const issue = problem(request, await send(t.url, request));
          if (issue)
            failures.push(
              `#${index} ${request.kind} ${request.method} ${request.path.slice(0, 120)} ${request.body?.subarray(0, 200).toString() ?? ''}: ${issue}`,
            );
        } catch (err) {
          failures.push(`#${index} ${request.kind} ${request.method} ${request.path.slice(0, 120)}: ${(err as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(failures.slice(0, 20)).toEqual([]);
    expect(kinds.size).toBe(10);
    const health = await t.request('GET', '/healthz', { token: null });
    expect(health.status).toBe(200);
    expect((await t.request('GET', '/v1/templates')).status).toBe(200);
  }, 300_000);
});
