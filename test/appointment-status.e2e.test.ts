import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { finalMessage } from './messaging-helpers';

/**
 * Who may confirm or cancel an appointment: the role × area table (nurses and
 * integrations read appointments, they do not change them), the tenant's
 * access-policy overrides, and the messaging service acting on a patient's
 * SMS reply. Setting the current status again is a no-op.
 */
describe(`appointment status changes go through the policy point (${backendName})`, () => {
  let t: TestPlatform;
  const tokens: Record<string, string> = {};
  const db = () => t.platform.db!;
  const setStatus = (token: string, id: string, status: string) =>
    t.graphql('mutation($id: ID!, $s: String!) { updateAppointmentStatus(id: $id, status: $s) { id status } }', { id, s: status }, { token });
  const statusOf = async (id: string) =>
    (await t.graphql('query($id: ID!) { appointment(id: $id) { status } }', { id }, { token: tokens.admin })).body.data.appointment.status;
  const auditCount = async (id: string) =>
    Number(
      (await db().query<{ n: string }>(`SELECT count(*) AS n FROM ehr."AuditRecord" WHERE "entityType" = 'Appointment' AND "entityId" = $1`, [id])).rows[0].n,
    );
  const setPolicy = async (role: string, canWrite: boolean) => {
    const res = await t.graphql(
      `mutation { setAccessPolicy(role: ${role}, area: APPOINTMENT, canRead: true, canWrite: ${canWrite}) { canWrite } }`,
      {},
      { token: tokens.admin },
    );
    expect(res.body.errors).toBeUndefined();
  };

  beforeAll(async () => {
    t = await startTestPlatform();
    for (const role of ['admin', 'clinician', 'nurse', 'receptionist', 'integration', 'support', 'platform_admin']) {
      tokens[role] = await t.token({ roles: [role], sub: `${role}-1` });
    }
    tokens.patient = await t.token({ roles: ['patient'], patientId: 'p-1001', sub: 'anna' });
    // A second booked appointment of p-1001, for the SMS reply path.
    const start = new Date(Date.now() + 2 * 86_400_000);
    await db().query(
      `INSERT INTO ehr."Appointment" ("tenantId", id, "patientId", start, "end", status, location, "createdAt", "updatedAt")
       VALUES ('demo', 'appt-reply', 'p-1001', $1, $2, 'booked', 'Room 3', now(), now())`,
      [start.toISOString(), new Date(start.getTime() + 1_800_000).toISOString()],
    );
  });
  afterAll(() => t?.stop());

  it.each(['nurse', 'integration', 'support', 'platform_admin', 'patient'])('refuses a %s confirming or cancelling, and changes nothing', async (role) => {
    for (const status of ['confirmed', 'cancelled']) {
      const res = await setStatus(tokens[role], 'appt-1001', status);
      expect(res.body.data).toBeNull();
      expect(['FORBIDDEN', 'NOT_FOUND']).toContain(res.body.errors[0].extensions.code);
    }
    expect(await statusOf('appt-1001')).toBe('booked');
  });

  it('refuses a nurse after an explicit setAccessPolicy(NURSE, APPOINTMENT, canWrite: false)', async () => {
    await setPolicy('NURSE', false);
    const res = await setStatus(tokens.nurse, 'appt-1001', 'confirmed');
    expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(await statusOf('appt-1001')).toBe('booked');
  });

  it('refuses a receptionist once the tenant withdraws its default write access', async () => {
    await setPolicy('RECEPTIONIST', false);
    const res = await setStatus(tokens.receptionist, 'appt-1001', 'confirmed');
    expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(await statusOf('appt-1001')).toBe('booked');
    await setPolicy('RECEPTIONIST', true);
  });

  it('lets a nurse confirm when the tenant grants nurses appointment writes', async () => {
    await setPolicy('NURSE', true);
    const res = await setStatus(tokens.nurse, 'appt-1001', 'confirmed');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.updateAppointmentStatus.status).toBe('confirmed');
    await setPolicy('NURSE', false);
  });

  it('answers the unchanged appointment, with no new audit record, when the status is already the requested one', async () => {
    const before = await auditCount('appt-1001');
    for (const token of [tokens.admin, tokens.receptionist]) {
      const res = await setStatus(token, 'appt-1001', 'confirmed');
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.updateAppointmentStatus).toEqual({ id: 'appt-1001', status: 'confirmed' });
    }
    expect(await auditCount('appt-1001')).toBe(before);
    const cancel = await setStatus(tokens.clinician, 'appt-1001', 'cancelled');
    expect(cancel.body.data.updateAppointmentStatus.status).toBe('cancelled');
    const again = await setStatus(tokens.clinician, 'appt-1001', 'cancelled');
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data.updateAppointmentStatus.status).toBe('cancelled');
    expect(await auditCount('appt-1001')).toBe(before + 1);
  });

  it("still confirms on the patient's SMS reply (the messaging service's reserved identity), with integrations locked out", async () => {
    await setPolicy('INTEGRATION', false);
    const remind = await t.request('POST', '/v1/appointments/appt-reply/remind', { token: tokens.admin });
    expect(remind.status).toBe(201);
    expect((await finalMessage(t, remind.body.id)).status).toBe('delivered');
    const reply = await t.request('POST', '/v1/simulator/replies', { body: { messageId: remind.body.id, body: 'C' }, token: tokens.admin });
    expect(reply.status).toBe(201);
    expect(reply.body.action).toBe('confirmed');
    expect(await statusOf('appt-reply')).toBe('confirmed');
  });
});
