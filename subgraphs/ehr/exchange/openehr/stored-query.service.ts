import { AppError, notFound, validationError } from '../../../../common/errors';
import { conflictOnDuplicate } from '../../../../common/db/unique-violation';
import type { StoredQuery as StoredQueryRow } from '../../db/generated/client';
import type { TenantStore } from '../../db/store';
import { assertCan } from '../../policy/rules';
import { parseAql } from './aql/parser';
import type { Parameters } from './aql/evaluate';
import type { OpenEhrResult, OpenEhrService } from './openehr.service';

/** `[namespace::]query-name`: a reverse-domain namespace, then letters, digits, `_`, `.`, `-`. */
const QUALIFIED_NAME = /^(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*::)?([A-Za-z0-9_.-]+)$/;
/** What a listing matches names against: a prefix of a qualified name. */
const NAME_PATTERN = /^[A-Za-z0-9_.:-]+$/;
const MAX_NAME = 200;
const VERSION = /^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})$/;
/** An exact version or a `{major}` / `{major}.{minor}` prefix (the latest matching version). */
const VERSION_PATTERN = /^(0|[1-9]\d{0,5})(?:\.(0|[1-9]\d{0,5})(?:\.(0|[1-9]\d{0,5}))?)?$/;
const MAX_AQL = 100_000;
const QUERY_TYPES = ['AQL'];

const latestFirst = [{ major: 'desc' as const }, { minor: 'desc' as const }, { patch: 'desc' as const }];

function queryName(name: string): string {
  const match = QUALIFIED_NAME.exec(name);
  if (!match || name.length > MAX_NAME || match[1].toLowerCase() === 'aql')
    throw validationError(`Invalid query name '${name}'`, [
      { path: 'qualified_query_name', message: "[namespace::]query-name: letters, digits, '_', '.', '-' (the name 'aql' is reserved), at most 200 characters" },
    ]);
  return name;
}

function versionNumbers(version: string, pattern: RegExp): number[] {
  const match = pattern.exec(version);
  if (!match)
    throw validationError(`Invalid version '${version}'`, [{ path: 'version', message: pattern === VERSION ? 'major.minor.patch' : 'major[.minor[.patch]]' }]);
  return match
    .slice(1)
    .filter((n) => n !== undefined)
    .map(Number);
}

/**
 * Stored (registered) queries of the openEHR REST API: AQL text under a
 * qualified name and SEMVER version, per tenant. Versions are immutable and
 * only ever grow; execution runs the text through the same AQL engine (and
 * so the same policy and access log) as an ad-hoc query.
 */
export class StoredQueryService {
  constructor(
    private readonly store: TenantStore,
    private readonly openehr: OpenEhrService,
  ) {}

  private body(row: StoredQueryRow) {
    return { name: row.name, type: row.type, version: row.version, saved: row.createdAt.toISOString(), q: row.q };
  }

  /** Stores `q` at `version`, or (none given) at 1.0.0 for a new name and the next patch version after the latest otherwise. */
  async save(name: string, version: string | null, q: string, type: string | null, reason: string | null): Promise<OpenEhrResult> {
    assertCan(this.store.identity, 'manageStoredQueries');
    queryName(name);
    const chosenType = (type ?? 'AQL').toUpperCase();
    if (!QUERY_TYPES.includes(chosenType)) throw validationError(`Query type '${type}' is not supported`, [{ path: 'query_type', message: 'AQL only' }]);
    if (!q.trim()) throw validationError('The body must be the AQL query (text/plain)', [{ path: 'q', message: 'required' }]);
    if (q.length > MAX_AQL) throw validationError(`The query is longer than ${MAX_AQL} characters`, [{ path: 'q', message: 'too long' }]);
    parseAql(q);
    const requested = version === null ? null : versionNumbers(version, VERSION);
    const row = await this.store
      .change(reason, async (tx, audit) => {
        const latest = await tx.storedQuery.findFirst({ where: { name }, orderBy: latestFirst });
        const numbers = requested ?? (latest ? [latest.major, latest.minor, latest.patch + 1] : [1, 0, 0]);
        if (requested && latest) {
          const exists = await tx.storedQuery.findFirst({ where: { name, version: version! } });
          if (exists) throw new AppError('CONFLICT', `Stored query ${name} version ${version} exists; versions are immutable`);
          if (compare(requested, [latest.major, latest.minor, latest.patch]) <= 0)
            throw new AppError('CONFLICT', `A new version of ${name} must be greater than its latest, ${latest.version}`, [
              { path: 'version', message: `not greater than ${latest.version}` },
            ]);
        }
        const created = await tx.storedQuery.create({
          data: {
            tenantId: this.store.tenantId,
            name,
            version: numbers.join('.'),
            major: numbers[0],
            minor: numbers[1],
            patch: numbers[2],
            type: chosenType,
            q,
            createdBy: this.store.identity.sub,
          },
        });
        await audit.record({ action: 'create', entityType: 'StoredQuery', entityId: `${name}/${created.version}`, after: { type: chosenType, q } });
        return created;
      })
      .catch((err) => conflictOnDuplicate(err, `Stored query ${name} was stored concurrently; retry`));
    return { body: this.body(row), uid: `${row.name}/${row.version}`, lastModified: row.createdAt };
  }

  /** Every version of every stored query whose name starts with `pattern` (all without one), by name, oldest version first. */
  async list(pattern: string | null): Promise<OpenEhrResult> {
    if (pattern !== null && (!NAME_PATTERN.test(pattern) || pattern.length > MAX_NAME))
      throw validationError(`Invalid query name pattern '${pattern}'`, [{ path: 'qualified_query_name', message: "letters, digits, '_', '.', '-', ':'" }]);
    const rows = await this.store.read((tx) =>
      tx.storedQuery.findMany({
        where: pattern ? { name: { startsWith: pattern } } : {},
        orderBy: [{ name: 'asc' }, { major: 'asc' }, { minor: 'asc' }, { patch: 'asc' }],
      }),
    );
    return { body: rows.map((row) => this.body(row)) };
  }

  /** The version given exactly, the latest of a `{major}[.{minor}]` prefix, or the latest of all; 404 when none. */
  async find(name: string, version: string | null): Promise<StoredQueryRow> {
    queryName(name);
    const [major, minor, patch] = version === null ? [] : versionNumbers(version, VERSION_PATTERN);
    const row = await this.store.read((tx) => tx.storedQuery.findFirst({ where: { name, major, minor, patch }, orderBy: latestFirst }));
    if (!row) throw notFound('Stored query', version === null ? name : `${name}/${version}`);
    return row;
  }

  async get(name: string, version: string | null): Promise<OpenEhrResult> {
    const row = await this.find(name, version);
    return { body: this.body(row), uid: `${row.name}/${row.version}`, lastModified: row.createdAt };
  }

  /** Runs a stored query as an ad-hoc one; the result set also names the query. */
  async execute(name: string, version: string | null, parameters: Parameters, offset: number | null, fetch: number | null, ehrId: string | null) {
    const row = await this.find(name, version);
    const { meta, ...result } = await this.openehr.query(row.q, parameters, offset, fetch, ehrId);
    return { meta, name: row.name, ...result };
  }
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}
