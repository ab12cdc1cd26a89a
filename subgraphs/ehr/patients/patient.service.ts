import DataLoader from 'dataloader';
import type { Identity } from '../../../common/auth/principal';
import type { FieldCipher } from '../../../common/crypto';
import { notFound } from '../../../common/errors';
import type { EhrPrisma } from '../db/client';
import type { Patient as PatientRow } from '../db/generated/client';
import { canReadPatient } from '../access';

export interface PatientView {
  id: string;
  ehrId: string;
  name: { given: string[]; family: string };
  birthDate: string | null;
  gender: string | null;
  contact: { phone: string | null; email: string | null };
}

/** Demographics of the caller's tenant; one instance per request (its DataLoader batches entity lookups). */
export class PatientService {
  private readonly loader: DataLoader<string, PatientRow | null>;

  constructor(
    private readonly prisma: EhrPrisma,
    private readonly cipher: FieldCipher,
    private readonly identity: Identity,
  ) {
    this.loader = new DataLoader(async (ids) => {
      const rows = await prisma.patient.findMany({
        where: { tenantId: identity.tenantId, id: { in: [...ids] }, deletedAt: null },
      });
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    });
  }

  /** The patient, or null when absent, of another tenant, or not visible to the caller. */
  async find(id: string): Promise<PatientView | null> {
    if (!canReadPatient(this.identity, id)) return null;
    const row = await this.loader.load(id);
    return row ? this.toView(row) : null;
  }

  async get(id: string): Promise<PatientView> {
    const patient = await this.find(id);
    if (!patient) throw notFound('Patient', id);
    return patient;
  }

  private toView(row: PatientRow): PatientView {
    return {
      id: row.id,
      ehrId: row.ehrId,
      name: { given: row.givenNames, family: row.family },
      birthDate: row.birthDate,
      gender: row.gender,
      contact: { phone: this.cipher.decryptOptional(row.phoneEnc), email: this.cipher.decryptOptional(row.emailEnc) },
    };
  }
}
