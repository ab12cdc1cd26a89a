import type PgBoss from 'pg-boss';
import { Writable, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { ensureQueue, workQueue } from '../../../common/db/boss';
import type { Identity, Role } from '../../../common/auth/principal';
import type { FieldCipher } from '../../../common/crypto';
import { AppError, notFound } from '../../../common/errors';
import type { Clock } from '../../../common/clock';
import { tenantClient } from '../../../common/db/tenant-session';
import type { Logger } from '../../../common/logger';
import type { ClinicalRecord } from '../clinical-record/client';
import type { MessagingPrisma } from '../db/client';
import { assertMayExport } from '../policy/rules';
import { openMessage, openText } from '../sealed';

const PATIENT_EXPORT_QUEUE = 'patient-export';
/** A finished archive is kept this long, then refused and deleted. */
const EXPORT_TTL_MS = 7 * 24 * 3600 * 1000;
/** Bytes per stored chunk: the most of the archive any instance holds at a time while writing or serving it. */
const EXPORT_CHUNK_BYTES = 256 * 1024;
/** Rows read per page while packing. */
const PAGE = 100;

export interface PatientExportView {
  id: string;
  patientId: string;
  status: string;
  progress: number;
  error: string | null;
  size: number | null;
  chunks: number;
  createdAt: Date;
  completedAt: Date | null;
  expiresAt: Date;
}

interface ExportRow {
  id: string;
  tenantId: string;
  patientId: string;
  requestedBy: string;
  requester: unknown;
  status: string;
  progress: number;
  error: string | null;
  size: number | null;
  createdAt: Date;
  completedAt: Date | null;
  expiresAt: Date;
}

function view(row: ExportRow): PatientExportView {
  const { tenantId: _tenant, requestedBy: _by, requester: _as, ...rest } = row;
  return { ...rest, chunks: row.size === null ? 0 : Math.ceil(row.size / EXPORT_CHUNK_BYTES) };
}

/**
 * Subject access and portability (GDPR art. 15/20, docs/privacy.md): a request
 * becomes a job on the queue; the job packs the patient's clinical record (read
 * as the requester through the ClinicalRecord boundary, so the clinical
 * record's policy decides) and their messaging data into a ZIP kept in chunks
 * until it expires. Requests and downloads are recorded in PatientExportAudit.
 */
export class PatientExportService {
  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly identity: Identity,
    private readonly deps: { clinical: ClinicalRecord; boss: PgBoss; clock: Clock; cipher: FieldCipher },
  ) {}

  async request(patientId: string): Promise<PatientExportView> {
    assertMayExport(this.identity, patientId);
    // The clinical record answers NOT_FOUND for an unknown patient or another tenant's; a restricted record is
    // still read for the right of access, which survives restriction.
    const found = await this.deps.clinical.readAs<{ patient: { id: string } | null }>(
      { ...this.identity, subjectAccess: true },
      'query($id: ID!) { patient(id: $id) { id } }',
      { id: patientId },
    );
    if (!found.patient) throw notFound('Patient', patientId);
    const now = this.deps.clock.now();
    const { sub, tenantId, roles } = this.identity;
    const row = await this.prisma.$transaction(async (tx) => {
      const created = await tx.patientExport.create({
        data: {
          tenantId,
          patientId,
          requestedBy: sub,
          requester: { roles, ...(this.identity.patientId ? { patientId: this.identity.patientId } : {}) },
          expiresAt: new Date(now.getTime() + EXPORT_TTL_MS),
        },
      });
      await tx.patientExportAudit.create({ data: { tenantId, exportId: created.id, patientId, actor: sub, action: 'request' } });
      return created;
    });
    await this.deps.boss.send(PATIENT_EXPORT_QUEUE, { tenantId, exportId: row.id }, { singletonKey: row.id });
    return view(row);
  }

  /** An export the caller may see (the same rule as requesting it); another's or an unknown one is NOT_FOUND. */
  async get(exportId: string): Promise<PatientExportView> {
    return view(await this.find(exportId));
  }

  /** One chunk of a finished archive, base64; reading chunk 0 records a download. */
  async chunk(exportId: string, seq: number): Promise<string> {
    const row = await this.find(exportId);
    if (row.status !== 'done') throw new AppError('CONFLICT', `Export '${exportId}' is ${row.status}, not ready`);
    if (row.expiresAt <= this.deps.clock.now()) throw notFound('Export', exportId);
    const chunk = await this.prisma.patientExportChunk.findUnique({ where: { exportId_seq: { exportId, seq } } });
    if (!chunk) throw notFound('Export chunk', String(seq));
    if (seq === 0)
      await this.prisma.patientExportAudit.create({
        data: { tenantId: row.tenantId, exportId, patientId: row.patientId, actor: this.identity.sub, action: 'download' },
      });
    return openChunk(this.deps.cipher, chunk).toString('base64');
  }

  private async find(exportId: string): Promise<ExportRow> {
    const row = await this.prisma.patientExport.findUnique({ where: { id: exportId } });
    if (!row) throw notFound('Export', exportId);
    try {
      assertMayExport(this.identity, row.patientId);
    } catch {
      throw notFound('Export', exportId);
    }
    return row;
  }
}

/** A chunk's ZIP bytes: sealed at rest, opened only to be downloaded (a legacy chunk holds them in plaintext). */
function openChunk(cipher: FieldCipher, chunk: { data: Uint8Array | null; dataEnc: string | null }): Buffer {
  return chunk.dataEnc !== null ? cipher.decryptBytes(chunk.dataEnc) : Buffer.from(chunk.data ?? []);
}

/** Pages of rows as a JSON array, read lazily: the archive pulls the next page only when it has written the last. */
function jsonArray<T>(page: (offset: number) => Promise<T[]>): Readable {
  return Readable.from(
    (async function* () {
      yield '[';
      let first = true;
      for (let offset = 0; ; offset += PAGE) {
        const rows = await page(offset);
        for (const row of rows) {
          yield `${first ? '' : ','}\n${JSON.stringify(row)}`;
          first = false;
        }
        if (rows.length < PAGE) break;
      }
      yield '\n]\n';
    })(),
  );
}

/** Writes the archive's bytes as numbered chunks, waiting for each insert (backpressure keeps memory bounded). */
function chunkWriter(store: (seq: number, data: Buffer) => Promise<void>): Writable & { size: () => number } {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let seq = 0;
  let size = 0;
  const flush = async () => {
    if (pendingBytes === 0) return;
    const data = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    await store(seq++, data);
  };
  const writer = new Writable({
    write(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes < EXPORT_CHUNK_BYTES) return done();
      flush().then(() => done(), done);
    },
    final(done) {
      flush().then(() => done(), done);
    },
  });
  return Object.assign(writer, { size: () => size });
}

interface ExportJobDeps {
  prisma: MessagingPrisma;
  cipher: FieldCipher;
  clinical: ClinicalRecord;
  logger: Logger;
}

/** Packs one export (the queue's job). A rerun after a crash starts the archive again from nothing. */
async function runPatientExport(deps: ExportJobDeps, tenantId: string, exportId: string): Promise<void> {
  const prisma = tenantClient(deps.prisma, tenantId);
  const job = await prisma.patientExport.findUnique({ where: { id: exportId } });
  if (!job || job.status === 'done') return;
  const { roles, patientId: ownPatientId } = job.requester as { roles: Role[]; patientId?: string };
  const requester: Identity = { sub: job.requestedBy, tenantId, roles, ...(ownPatientId ? { patientId: ownPatientId } : {}), subjectAccess: true };
  const { patientId } = job;
  await prisma.patientExportChunk.deleteMany({ where: { exportId } });
  await prisma.patientExport.update({ where: { id: exportId }, data: { status: 'running', progress: 0, error: null } });

  const read = <T>(query: string, variables: Record<string, unknown>) => deps.clinical.readAs<T>(requester, query, variables);
  let ehr: Promise<string> | undefined;
  const ehrId = () =>
    (ehr ??= read<{ patient: { ehrId: string } }>('query($id: ID!) { patient(id: $id) { ehrId } }', { id: patientId }).then((d) => d.patient.ehrId));
  /** One openEHR answer about the patient's EHR (`openehrEhrTags`, `openehrEhrStatus`): its body as a JSON file. */
  const ehrBody = (field: string) =>
    Readable.from(
      (async function* () {
        const data = await read<Record<string, { body: unknown }>>(`query($e: ID!) { ${field}(ehrId: $e) { body } }`, { e: await ehrId() });
        yield JSON.stringify(data[field].body, null, 2);
      })(),
    );
  /**
   * A page of the patient's current compositions in openEHR canonical JSON: each one's body as the openEHR
   * REST API's GET of it answers (the `openehrComposition` field it is served from), one aliased query per page.
   */
  const canonicalCompositions = async (offset: number) => {
    const listed = await read<{ compositions: { data: Array<{ uid: string }> } }>(
      'query($f: CompositionFilter, $o: Int) { compositions(filter: $f, limit: 100, offset: $o) { data { uid } } }',
      { f: { patientId, includeDeleted: false }, o: offset },
    );
    const uids = listed.compositions.data.map((c) => c.uid);
    if (uids.length === 0) return [];
    const fields = uids.map((_, i) => `c${i}: openehrComposition(ehrId: $e, uid: $u${i}) { body }`).join(' ');
    const data = await read<Record<string, { body: unknown }>>(`query($e: ID!, ${uids.map((_, i) => `$u${i}: ID!`).join(', ')}) { ${fields} }`, {
      e: await ehrId(),
      ...Object.fromEntries(uids.map((uid, i) => [`u${i}`, uid])),
    });
    return uids.map((_, i) => data[`c${i}`].body);
  };
  const parts: Array<[string, () => Readable]> = [
    [
      'fhir/Patient-everything.json',
      () =>
        Readable.from(
          (async function* () {
            const data = await read<{ fhirPatientEverything: unknown }>('query($id: ID!) { fhirPatientEverything(patientId: $id, params: []) }', {
              id: patientId,
            });
            yield JSON.stringify(data.fhirPatientEverything, null, 2);
          })(),
        ),
    ],
    ['openehr/compositions.json', () => jsonArray(canonicalCompositions)],
    ['openehr/item-tags.json', () => ehrBody('openehrEhrTags')],
    ['openehr/ehr-status.json', () => ehrBody('openehrEhrStatus')],
    [
      'access-log.json',
      () =>
        jsonArray(async (offset) => {
          const data = await read<{ accessLog: { data: unknown[] } }>(
            'query($id: ID!, $o: Int) { accessLog(patientId: $id, limit: 100, offset: $o) { data { id actor roles action entityType entityId at } } }',
            { id: patientId, o: offset },
          );
          return data.accessLog.data;
        }),
    ],
    [
      'messaging/messages.json',
      () =>
        jsonArray(async (offset) => {
          const rows = await prisma.message.findMany({ where: { patientId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], skip: offset, take: PAGE });
          return rows.map((row) => {
            const { recipientEnc: _r, recipientHash: _h, requestHash: _q, leaseUntil: _l, ...message } = openMessage(deps.cipher, row);
            return message;
          });
        }),
    ],
    [
      'messaging/replies.json',
      () =>
        jsonArray(async (offset) => {
          const rows = await prisma.inboundMessage.findMany({
            where: { patientId },
            orderBy: [{ receivedAt: 'asc' }, { id: 'asc' }],
            skip: offset,
            take: PAGE,
          });
          return rows.map(({ body, bodyEnc, ...reply }) => ({ ...reply, body: openText(deps.cipher, bodyEnc, body) }));
        }),
    ],
    ['messaging/preferences.json', () => jsonArray((offset) => prisma.communicationPreference.findMany({ where: { patientId }, skip: offset, take: PAGE }))],
    [
      'messaging/preference-and-consent-history.json',
      () =>
        jsonArray((offset) => prisma.preferenceChange.findMany({ where: { patientId }, orderBy: [{ at: 'asc' }, { id: 'asc' }], skip: offset, take: PAGE })),
    ],
    [
      'consents.json',
      () =>
        Readable.from(
          (async function* () {
            const data = await read<{ patient: { consents: unknown[] } | null }>('query($id: ID!) { patient(id: $id) { consents { purpose granted } } }', {
              id: patientId,
            });
            yield JSON.stringify(data.patient?.consents ?? [], null, 2);
          })(),
        ),
    ],
  ];

  try {
    const zip = new yazl.ZipFile();
    const writer = chunkWriter(async (seq, data) => {
      await prisma.patientExportChunk.create({ data: { exportId, tenantId, seq, dataEnc: deps.cipher.encryptBytes(data) } });
    });
    const written = pipeline(zip.outputStream, writer);
    for (const [index, [name, open]] of parts.entries()) {
      const source = open();
      const entryDone = new Promise<void>((resolve, reject) => {
        source.once('end', resolve);
        source.once('error', reject);
      });
      zip.addReadStream(source, name);
      // One entry at a time, so a failed clinical read stops the archive where it happened (as does a failed chunk insert).
      await Promise.race([entryDone, written]);
      await prisma.patientExport.update({ where: { id: exportId }, data: { progress: Math.floor(((index + 1) * 100) / (parts.length + 1)) } });
    }
    zip.end();
    await written;
    await prisma.patientExport.update({
      where: { id: exportId },
      data: { status: 'done', progress: 100, size: writer.size(), completedAt: new Date() },
    });
  } catch (error) {
    const message = error instanceof AppError ? `${error.code}: ${error.message}` : 'the archive could not be written';
    deps.logger.warn({ err: error, exportId }, 'patient export failed');
    await prisma.patientExportChunk.deleteMany({ where: { exportId } });
    await prisma.patientExport.update({ where: { id: exportId }, data: { status: 'failed', error: message } });
  }
}

/** The export worker: jobs survive a restart on the queue; a finished or failed export is not retried. */
export async function startPatientExportWorker(boss: PgBoss, deps: ExportJobDeps): Promise<{ close(): Promise<void> }> {
  await ensureQueue(boss, { name: PATIENT_EXPORT_QUEUE, retryLimit: 2, retryDelay: 30, expireInSeconds: 3600 });
  return workQueue<{ tenantId: string; exportId: string }>(boss, PATIENT_EXPORT_QUEUE, { pollingIntervalSeconds: 1 }, async ([job]) => {
    await runPatientExport(deps, job.data.tenantId, job.data.exportId);
  });
}
