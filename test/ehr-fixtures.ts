/** Composition content of the seeded templates, and its openEHR REST envelope, shared by the clinical record tests. */
export const VITALS = {
  blood_pressure: { systolic: { magnitude: 120, unit: 'mm[Hg]' }, diastolic: { magnitude: 80, unit: 'mm[Hg]' } },
  pulse: { rate: { magnitude: 72, unit: '/min' } },
  recorded_at: '2026-11-22T09:00:00Z',
};

export const LAB = {
  lab_result: {
    test_name: { code: '2345-7', value: 'Glucose' },
    status: { code: 'final' },
    specimen_collected_at: '2026-11-22T08:00:00Z',
    results: [{ analyte: 'Glucose', value: { magnitude: 5.4, unit: 'mmol/L' }, interpretation: { code: 'N' } }],
  },
};

export const ORDER = {
  medication_order: {
    medication: 'Metformin 500 mg tablet',
    route: { code: '20053000' },
    dose: { magnitude: 500, unit: 'mg' },
    doses_per_day: 2,
    start_date: '2026-11-22',
  },
};

export const ENCOUNTER = { encounter: { encounter_type: { code: 'AMB' }, start: '2026-11-22T09:30:00Z', location: 'Clinic Amstel, room 2' } };

/** The encounter body of docs/clinical-record.md: every element of the simple form. */
export const DOCUMENTED_ENCOUNTER = {
  encounter: {
    encounter_type: { code: 'AMB' },
    start: '2026-11-22T09:30:00Z',
    end: '2026-11-22T10:00:00Z',
    location: 'Clinic Amstel, room 2',
    practitioner: 'Dr. Jones',
    reason: 'Follow-up of raised blood pressure',
    appointment_id: 'apt-42',
  },
};

export const NOTE = (body: string) => ({ note: { title: 'Progress note', note_type: { code: '11506-3' }, authored_at: '2026-11-22T10:00:00Z', body } });

/** Content in the envelope openEHR REST commits: a COMPOSITION naming its template. */
export const envelope = (content: unknown, templateId = 'vital_signs.v1') => ({
  _type: 'COMPOSITION',
  archetype_details: { template_id: { value: templateId } },
  content,
});
