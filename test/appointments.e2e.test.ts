import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { eventually, finalMessage } from './messaging-helpers';
import { connectAs, Subscription, untilLive, type Connection } from './subscriptions.helpers';
import { catalogueErrors } from './webhook-catalogue';
import { startReceiver, verifySignature, waitFor, type Receiver } from './webhook-receiver';

const SECRET = 'whsec-appointments-0123456789ab';
const MINUTE = 60_000;
const FIELDS = 'id patientId start end status location practitionerId timeZone';
type Event = { id: string; type: string; timestamp: string; data: any };

/** An instant `ms` from now, to the second, with its offset. */
const at = (ms: number) => new Date(Math.floor((Date.now() + ms) / 1000) * 1000).toISOString();

/**
 * Appointments booked, moved and cancelled through GraphQL, REST and FHIR:
 * slot checks (overlap, time zones), access, tenant isolation, the
 * appointment.* events on a webhook and a subscription alike, and the
 * automatic reminder a booking schedules (a short per-tenant lead time makes
 * it fall due within seconds) that the patient confirms with C.
 */
describe(`appointments (${backendName})`, () => {
  let t: TestPlatform;
  let receiver: Receiver;
  let connection: Connection;
  let events: Subscription<{ events: Event }>;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestPlatform({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_CA_FILE: receiver.caFile });
    const hook = await t.request('POST', '/v1/webhooks', {
      body: {
        url: receiver.url('/appointments'),
        events: ['appointment.booked', 'appointment.rescheduled', 'appointment.confirmed', 'appointment.cancelled'],
        secret: SECRET,
      },
    });
    expect(hook.status).toBe(201);
    connection = await connectAs(t, await t.token());
    events = new Subscription(
      connection.client,
      'subscription { events(types: [APPOINTMENT_BOOKED, APPOINTMENT_RESCHEDULED, APPOINTMENT_CONFIRMED, APPOINTMENT_CANCELLED]) { id type timestamp data } }',
    );
    await untilLive(t.platform.runtime.events, connection, 'demo');
  });
  afterAll(async () => {
    events?.stop();
    await connection?.dispose();
    await t?.stop();
    await receiver?.close();
  });

  /** The events of one appointment as the webhook receiver got them (signature checked) and as the subscription did: they must agree. */
  async function eventsOf(appointmentId: string, count: number): Promise<Event[]> {
    const hooks = await waitFor(`${count} webhook events of ${appointmentId}`, () => {
      const mine = receiver.received('/appointments').filter((h) => h.body.data.appointmentId === appointmentId);
      return mine.length >= count ? mine : undefined;
    });
    for (const hook of hooks) expect(verifySignature(SECRET, hook.raw, hook.headers['x-webhook-signature'])).toBe(true);
    const mine = () => events.results.map((r) => r.data!.events).filter((e) => e.data.appointmentId === appointmentId);
    expect(await events.until(() => mine().length >= count)).toBe(true);
    const viaSubscription = mine().map((e) => ({ ...e, type: e.type.toLowerCase().replace('_', '.') }));
    const viaWebhook = hooks.map((h) => h.body);
    const byId = (a: Event, b: Event) => a.id.localeCompare(b.id);
    expect([...viaSubscription].sort(byId)).toEqual([...viaWebhook].sort(byId));
    // What the OpenAPI document's event catalogue says of each type.
    expect(viaWebhook.flatMap(catalogueErrors)).toEqual([]);
    return viaWebhook.sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.id.localeCompare(b.id));
  }

  const reminderRow = async (appointmentId: string) =>
    (
      await t.platform.db!.query<{ status: string; dueAt: string; start: string; messageId: string | null }>(
        `SELECT status, to_char("dueAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "dueAt", to_char(start, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS start, "messageId"
         FROM messaging."AppointmentReminder" WHERE "appointmentId" = $1`,
        [appointmentId],
      )
    ).rows[0];

  it('books through GraphQL, reminds automatically at the tenant lead time, and the patient confirms with C', async () => {
    const lead = await t.graphql('mutation { setReminderLeadTime(leadMinutes: 60) { leadMinutes } }');
    expect(lead.body.data.setReminderLeadTime.leadMinutes).toBe(60);
    // Due 15 s from now: the lead time before a start 60 min 15 s away. The reminder is scheduled through the
    // appointment outbox; were it due sooner, a busy machine could schedule it after its due time (then due at once).
    const start = at(60 * MINUTE + 15_000);
    const booked = await t.graphql(`mutation($input: BookAppointmentInput!) { bookAppointment(input: $input) { ${FIELDS} } }`, {
      input: { patientId: 'p-1001', start, end: at(90 * MINUTE), practitionerId: 'dr-auto', location: 'Room auto' },
    });
    expect(booked.body.errors).toBeUndefined();
    const appointment = booked.body.data.bookAppointment;
    expect(appointment).toMatchObject({ patientId: 'p-1001', status: 'booked', start, practitionerId: 'dr-auto', timeZone: null });

    const scheduled = await eventually(async () => await reminderRow(appointment.id), 'the reminder to be scheduled');
    expect(scheduled.dueAt).toBe(new Date(Date.parse(start) - 60 * MINUTE).toISOString());
    const sent = await eventually(async () => {
      const row = await reminderRow(appointment.id);
      return row.status === 'sent' ? row : undefined;
    }, 'the reminder to go out');
    const message = await finalMessage(t, sent.messageId!);
    expect(message).toMatchObject({ status: 'delivered', templateId: 'appointment-reminder', appointmentId: appointment.id });
    expect(new Date(message.createdAt).getTime()).toBeGreaterThanOrEqual(Date.parse(scheduled.dueAt));

    const reply = await t.request('POST', '/v1/simulator/replies', { body: { messageId: sent.messageId, body: 'C' } });
    expect(reply.body.action).toBe('confirmed');
    const seen = await eventsOf(appointment.id, 2);
    expect(seen.map((e) => e.type)).toEqual(['appointment.booked', 'appointment.confirmed']);
    expect(seen[0].data).toEqual({ appointmentId: appointment.id, patientId: 'p-1001', status: 'booked', start, end: appointment.end });
    expect(seen[1].data).toMatchObject({ status: 'confirmed', start });

    const audit = await t.request('GET', `/api/ehr/audit?entityId=${appointment.id}`);
    expect(audit.body.data.map((r: { action: string }) => r.action).sort()).toEqual(['create', 'update']);
  });

  it('[EHR-014] refuses an overlapping slot of the same practitioner or location (409) and bad times (400), changing nothing', async () => {
    const base = 5 * 24 * 60 * MINUTE;
    const first = await t.request('POST', '/api/ehr/appointments', {
      body: { patientId: 'p-1001', start: at(base), end: at(base + 30 * MINUTE), practitionerId: 'dr-slot', location: 'Room 7' },
    });
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(`/api/ehr/appointments/${first.body.id}`);
    const count = async () => (await t.platform.db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."Appointment"`)).rows[0].n;
    const before = await count();

    const samePractitioner = await t.request('POST', '/api/ehr/appointments', {
      body: { patientId: 'p-1002', start: at(base + 15 * MINUTE), end: at(base + 45 * MINUTE), practitionerId: 'dr-slot' },
    });
    expect(samePractitioner.status).toBe(409);
    expect(samePractitioner.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining(first.body.id) });
    const sameRoom = await t.request('POST', '/api/ehr/appointments', {
      body: { patientId: 'p-1002', start: at(base - 10 * MINUTE), end: at(base + 5 * MINUTE), location: 'Room 7' },
    });
    expect(sameRoom.status).toBe(409);
    const localWithoutZone = await t.request('POST', '/api/ehr/appointments', {
      body: { patientId: 'p-1002', start: '2030-01-10T09:00', end: '2030-01-10T09:30' },
    });
    expect(localWithoutZone.status).toBe(400);
    expect(localWithoutZone.body.error.details.map((d: { path: string }) => d.path)).toEqual(['start', 'end']);
    const past = await t.request('POST', '/api/ehr/appointments', { body: { patientId: 'p-1002', start: at(-MINUTE), end: at(MINUTE) } });
    expect(past.status).toBe(400);
    const unknownField = await t.request('POST', '/api/ehr/appointments', { body: { patientId: 'p-1002', start: at(base), end: at(base + MINUTE), room: 1 } });
    expect(unknownField.status).toBe(400);
    expect(await count()).toBe(before);

    // Back to back is not an overlap; a local time is read in its zone (Amsterdam is UTC+1 in January).
    const adjacent = await t.request('POST', '/api/ehr/appointments', {
      body: { patientId: 'p-1002', start: at(base + 30 * MINUTE), end: at(base + 60 * MINUTE), practitionerId: 'dr-slot', location: 'Room 7' },
    });
    expect(adjacent.status).toBe(201);
    const zoned = await t.request('POST', '/api/ehr/appointments', {
      body: { patientId: 'p-1002', start: '2030-01-10T09:00', end: '2030-01-10T09:30', timeZone: 'Europe/Amsterdam', practitionerId: 'dr-zone' },
    });
    expect(zoned.status).toBe(201);
    expect(zoned.body).toMatchObject({ start: '2030-01-10T08:00:00.000Z', end: '2030-01-10T08:30:00.000Z', timeZone: 'Europe/Amsterdam' });
  });

  it('[EHR-014] books a slot once under concurrent requests, per location, practitioner and patient; a move into a taken slot is 409; cancelled ones free it', async () => {
    const base = 9 * 24 * 60 * MINUTE;
    const book = (body: Record<string, unknown>) => t.request('POST', '/api/ehr/appointments', { body });
    /** Bookings sent at once: exactly one is 201, every other 409 CONFLICT; the winner's id. */
    const race = async (what: string, bodies: Record<string, unknown>[]) => {
      const answers = await Promise.all(bodies.map(book));
      expect([what, answers.map((a) => a.status).sort()]).toEqual([what, [201, ...bodies.slice(1).map(() => 409)]]);
      for (const refused of answers.filter((a) => a.status === 409)) expect(refused.body.error.code).toBe('CONFLICT');
      return answers.find((a) => a.status === 201)!.body.id as string;
    };
    const slot = (from: number, minutes: number) => ({ start: at(base + from * MINUTE), end: at(base + (from + minutes) * MINUTE) });
    const upcoming = async (column: string, value: string) =>
      (
        await t.platform.db!.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ehr."Appointment" WHERE "tenantId" = 'demo' AND "${column}" = $1 AND status IN ('booked', 'confirmed')`,
          [value],
        )
      ).rows[0].n;

    // One room: different patients and practitioners, overlapping times.
    const room = await race(
      'one room',
      ['p-1001', 'p-1002', 'p-1003'].map((patientId, i) => ({ patientId, ...slot(i * 5, 30), practitionerId: `dr-race-${i}`, location: 'Room race' })),
    );
    expect(await upcoming('location', 'Room race')).toBe(1);
    // One practitioner: different patients and rooms.
    await race(
      'one practitioner',
      ['p-1001', 'p-1002', 'p-1003'].map((patientId, i) => ({ patientId, ...slot(120 + i * 5, 30), practitionerId: 'dr-race', location: `Room race ${i}` })),
    );
    expect(await upcoming('practitionerId', 'dr-race')).toBe(1);
    // One patient: different practitioners and rooms.
    await race(
      'one patient',
      [0, 1, 2].map((i) => ({ patientId: 'p-1002', ...slot(240 + i * 5, 30), practitionerId: `dr-solo-${i}`, location: `Room solo ${i}` })),
    );

    // A move into the room's taken slot is refused and changes nothing.
    const later = await book({ patientId: 'p-1003', ...slot(360, 30), location: 'Room race' });
    expect(later.status).toBe(201);
    const taken = slot(10, 15);
    const into = await t.request('PATCH', `/api/ehr/appointments/${later.body.id}`, { body: taken });
    expect([into.status, into.body.error?.code, into.body.error?.message]).toEqual([409, 'CONFLICT', expect.stringContaining(room)]);
    const startOf = async (id: string) =>
      (
        await t.platform.db!.query<{ start: string }>(`SELECT to_char(start, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS start FROM ehr."Appointment" WHERE id = $1`, [
          id,
        ])
      ).rows[0].start;
    expect(await startOf(later.body.id)).toBe(later.body.start);
    // A cancelled appointment blocks nothing: once the room's booking is cancelled, the move goes through.
    expect((await t.request('PATCH', `/api/ehr/appointments/${room}`, { body: { status: 'cancelled' } })).status).toBe(200);
    const moved = await t.request('PATCH', `/api/ehr/appointments/${later.body.id}`, { body: taken });
    expect([moved.status, moved.body.start]).toEqual([200, taken.start]);
  });

  it('reschedules (the reminder moves) and cancels (the reminder is cancelled) over REST, with their events', async () => {
    const start = at(3 * 24 * 60 * MINUTE);
    const created = await t.request('POST', '/api/ehr/appointments', {
      body: { patientId: 'p-1002', start, end: at(3 * 24 * 60 * MINUTE + 20 * MINUTE), practitionerId: 'dr-move' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const first = await eventually(async () => await reminderRow(id), 'the reminder to be scheduled');
    expect(first).toMatchObject({ status: 'scheduled', dueAt: new Date(Date.parse(start) - 60 * MINUTE).toISOString() });

    const newStart = '2031-03-04T10:00+01:00';
    const moved = await t.request('PATCH', `/api/ehr/appointments/${id}`, {
      body: { start: newStart, end: '2031-03-04T10:30+01:00', location: 'Room 9' },
      headers: { 'X-Change-Reason': 'patient asked' },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ start: '2031-03-04T09:00:00.000Z', practitionerId: 'dr-move', location: 'Room 9', status: 'booked' });
    const rescheduled = await eventually(async () => {
      const row = await reminderRow(id);
      return row.start === '2031-03-04T09:00:00.000Z' ? row : undefined;
    }, 'the reminder to move');
    expect(rescheduled).toMatchObject({ status: 'scheduled', dueAt: '2031-03-04T08:00:00.000Z' });

    const cancelled = await t.request('PATCH', `/api/ehr/appointments/${id}`, { body: { status: 'cancelled' } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    expect(await eventually(async () => ((await reminderRow(id)).status === 'cancelled' ? 'cancelled' : undefined), 'the reminder to be cancelled')).toBe(
      'cancelled',
    );
    const again = await t.request('PATCH', `/api/ehr/appointments/${id}`, { body: { start: newStart, end: '2031-03-04T11:00+01:00' } });
    expect(again.status).toBe(409);

    const seen = await eventsOf(id, 3);
    expect(seen.map((e) => e.type)).toEqual(['appointment.booked', 'appointment.rescheduled', 'appointment.cancelled']);
    expect(seen[1].data).toEqual({
      appointmentId: id,
      patientId: 'p-1002',
      status: 'booked',
      start: '2031-03-04T09:00:00.000Z',
      end: '2031-03-04T09:30:00.000Z',
      previousStart: start,
    });
  });

  it('lets only the roles the access matrix allows book, and keeps tenants apart', async () => {
    const slot = { start: at(6 * 24 * 60 * MINUTE), end: at(6 * 24 * 60 * MINUTE + 30 * MINUTE) };
    const nurse = await t.request('POST', '/api/ehr/appointments', { token: await t.token({ roles: ['nurse'] }), body: { patientId: 'p-1001', ...slot } });
    expect(nurse.status).toBe(403);
    const patient = await t.request('POST', '/api/ehr/appointments', {
      token: await t.token({ roles: ['patient'], patientId: 'p-1001' }),
      body: { patientId: 'p-1001', ...slot },
    });
    expect(patient.status).toBe(403);
    const receptionist = await t.request('POST', '/api/ehr/appointments', {
      token: await t.token({ roles: ['receptionist'] }),
      body: { patientId: 'p-1001', ...slot },
    });
    expect(receptionist.status).toBe(201);

    const acme = await t.token({ tenants: ['acme'] });
    const otherTenantsPatient = await t.request('POST', '/api/ehr/appointments', { token: acme, body: { patientId: 'p-1001', ...slot } });
    expect(otherTenantsPatient.status).toBe(404);
    const otherTenantsAppointment = await t.request('PATCH', `/api/ehr/appointments/${receptionist.body.id}`, { token: acme, body: { status: 'cancelled' } });
    expect(otherTenantsAppointment.status).toBe(404);
    // The same practitioner id in another tenant is another person: no overlap across tenants.
    const acmeBooking = await t.request('POST', '/api/ehr/appointments', { token: acme, body: { patientId: 'p-2001', ...slot, practitionerId: 'dr-slot' } });
    expect(acmeBooking.status).toBe(201);
    const demoSame = await t.request('POST', '/api/ehr/appointments', { body: { patientId: 'p-1003', ...slot, practitionerId: 'dr-slot' } });
    expect(demoSame.status).toBe(201);
    expect((await t.request('GET', `/api/ehr/audit?entityId=${acmeBooking.body.id}`)).body.data).toEqual([]);
  });

  it('creates and updates an Appointment over FHIR, round trip', async () => {
    const fhir = { 'content-type': 'application/fhir+json' };
    const resource = {
      resourceType: 'Appointment',
      status: 'booked',
      start: '2032-05-06T09:00:00+02:00',
      end: '2032-05-06T09:30:00+02:00',
      participant: [
        { actor: { reference: 'Patient/p-1003' }, status: 'accepted' },
        { actor: { reference: 'Practitioner/dr-fhir' }, status: 'accepted' },
        { actor: { display: 'Room F' }, status: 'accepted' },
      ],
    };
    const created = await t.request('POST', '/fhir/R4/Appointment', { headers: fhir, body: resource });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      resourceType: 'Appointment',
      status: 'booked',
      start: '2032-05-06T07:00:00.000Z',
      end: '2032-05-06T07:30:00.000Z',
      participant: resource.participant,
      meta: { versionId: '1' },
    });
    const id = created.body.id;
    const read = await t.request('GET', `/fhir/R4/Appointment/${id}`);
    expect(read.body).toEqual(created.body);

    const clash = await t.request('POST', '/fhir/R4/Appointment', {
      headers: fhir,
      body: { ...resource, participant: [resource.participant[0], resource.participant[1]] },
    });
    expect(clash.status).toBe(409);
    const noPatient = await t.request('POST', '/fhir/R4/Appointment', { headers: fhir, body: { ...resource, participant: [resource.participant[1]] } });
    expect(noPatient.status).toBe(400);

    const moved = await t.request('PUT', `/fhir/R4/Appointment/${id}`, {
      headers: { ...fhir, 'If-Match': 'W/"1"' },
      body: { ...read.body, start: '2032-05-06T11:00:00+02:00', end: '2032-05-06T11:30:00+02:00' },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ start: '2032-05-06T09:00:00.000Z', meta: { versionId: '2' } });
    const stale = await t.request('PUT', `/fhir/R4/Appointment/${id}`, {
      headers: { ...fhir, 'If-Match': 'W/"1"' },
      body: { ...moved.body, status: 'cancelled' },
    });
    expect(stale.status).toBe(412);
    const cancelled = await t.request('PUT', `/fhir/R4/Appointment/${id}`, {
      headers: { ...fhir, 'If-Match': 'W/"2"' },
      body: { ...moved.body, status: 'cancelled' },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', meta: { versionId: '3' } });
    const history = await t.request('GET', `/fhir/R4/Appointment/${id}/_history`);
    expect(history.body.entry.map((e: any) => [e.resource.meta.versionId, e.resource.status, e.resource.start])).toEqual([
      ['3', 'cancelled', '2032-05-06T09:00:00.000Z'],
      ['2', 'booked', '2032-05-06T09:00:00.000Z'],
      ['1', 'booked', '2032-05-06T07:00:00.000Z'],
    ]);
  });
});
