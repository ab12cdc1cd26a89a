import { z } from 'zod';
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { initialsOf } from '../../common/initials';
import { PURPOSE_NAMES, PURPOSES_OF_USE, type PurposeOfUse } from '../../common/auth/purpose-of-use';
import { DEFAULT_MAX_BYTES, fitToBudget } from './budget';
import { answer, budget, guarded, maxBytes } from './tool-result';
import type { AgentQuery } from './server';

/**
 * The clinical tools, resources and prompts of the MCP server. Every tool is
 * one GraphQL operation on the federated API (`clinicalContext`, `patients`)
 * as the calling agent, so the subgraphs' policy points decide access and the
 * clinical record logs the read with the tool, client and purpose.
 */

const purpose = z
  .enum(PURPOSE_NAMES as [PurposeOfUse, ...PurposeOfUse[]])
  .describe(
    'Why you read this data (recorded in the access log): treatment, care_management, patient_requested, operations or emergency (flagged for the privacy officer as break-glass)',
  );
const patientId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/)
  .describe('The patient id, e.g. p-1001 (find it with find_patients)');
const maxItems = z.number().int().min(1).max(100).default(10).describe('Most entries per list, newest first (1..100)');
const date = z.string().max(40).describe('YYYY-MM-DD or ISO 8601 timestamp with zone');

const coding = z.object({ system: z.string(), code: z.string(), display: z.string().nullable() });
const quantity = z.object({ value: z.number(), unit: z.string(), system: z.string(), code: z.string() });
const observation = z.object({
  id: z.string(),
  compositionUid: z.string(),
  status: z.string(),
  category: z.string().describe('vital-signs | laboratory'),
  code: coding.describe('LOINC'),
  text: z.string().nullable(),
  effective: z.string(),
  value: quantity.nullable(),
  interpretation: coding.nullable(),
  referenceRange: z.string().nullable(),
  components: z.array(
    z.object({
      code: coding.nullable(),
      text: z.string().nullable(),
      value: quantity.nullable(),
      interpretation: coding.nullable(),
      referenceRange: z.string().nullable(),
    }),
  ),
  note: z.string().nullable().describe('null when redacted'),
});
const medication = z.object({
  id: z.string(),
  status: z.string(),
  medication: z.string(),
  authoredOn: z.string(),
  dose: quantity.nullable(),
  dosesPerDay: z.number().nullable(),
  route: coding.nullable(),
  start: z.string().nullable(),
  end: z.string().nullable(),
  asNeeded: z.boolean().nullable(),
  instructions: z.string().nullable().describe('null when redacted'),
});
const encounter = z.object({
  id: z.string(),
  status: z.string(),
  class: coding.nullable(),
  start: z.string(),
  end: z.string().nullable(),
  reason: z.string().nullable().describe('null when redacted'),
  location: z.string().nullable(),
  appointmentId: z.string().nullable(),
});
const note = z.object({
  id: z.string(),
  type: coding.nullable(),
  title: z.string().nullable(),
  date: z.string(),
  author: z.string().nullable(),
  text: z.string().nullable().describe('null when redacted'),
});
const appointment = z.object({ id: z.string(), start: z.string(), end: z.string(), status: z.string(), location: z.string().nullable() });
const message = z.object({
  id: z.string(),
  channel: z.string(),
  templateId: z.string(),
  status: z.string().describe('queued | sending | sent | delivered | failed'),
  error: z.string().nullable(),
  createdAt: z.string(),
});
const communication = z.object({
  preferences: z.object({ channels: z.object({ sms: z.boolean(), email: z.boolean() }), language: z.string() }),
  recentMessages: z.array(message),
});
const coverage = z.array(z.object({ section: z.string(), total: z.number(), returned: z.number(), truncated: z.boolean() }));
const disclosure = z.object({ contactDetails: z.boolean(), freeText: z.boolean() });
const common = { patientId: z.string(), purposeCode: z.string().describe('HL7 v3 PurposeOfUse code'), disclosure, coverage, budget };

const CODING = 'system code display';
const QUANTITY = 'value unit system code';
const OBSERVATION = `id compositionUid status category code { ${CODING} } text effective value { ${QUANTITY} } interpretation { ${CODING} } referenceRange
  components { code { ${CODING} } text value { ${QUANTITY} } interpretation { ${CODING} } referenceRange } note`;
const SECTION_FIELDS: Record<string, string> = {
  DEMOGRAPHICS: 'demographics { patientId initials birthYear ageYears gender contact { phone email } }',
  MEDICATIONS: `medications { id status medication authoredOn dose { ${QUANTITY} } dosesPerDay route { ${CODING} } start end asNeeded instructions }`,
  VITALS: `vitals { ${OBSERVATION} }`,
  LABS: `labs { ${OBSERVATION} }`,
  ENCOUNTERS: `encounters { id status class { ${CODING} } start end reason location appointmentId }`,
  NOTES: `notes { id type { ${CODING} } title date author text }`,
  APPOINTMENTS: 'appointments { id start end status location }',
  COMMUNICATION: `patient { preferences { channels { sms email } language } messages(limit: $messages) { data { id channel templateId status error createdAt } } }`,
};

function contextQuery(sections: string[]): string {
  const messages = sections.includes('COMMUNICATION') ? ', $messages: Int' : '';
  return `query McpClinicalContext($patientId: ID!, $purpose: PurposeOfUse!, $sections: [ClinicalContextSection!], $since: String, $until: String,
      $maxItems: Int, $codes: [String!]${messages}) {
    clinicalContext(patientId: $patientId, purpose: $purpose, sections: $sections, since: $since, until: $until, maxItems: $maxItems, codes: $codes) {
      patientId purposeCode disclosure { contactDetails freeText } coverage { section total returned truncated }
      ${sections.map((s) => SECTION_FIELDS[s]).join('\n')}
    }
  }`;
}

interface ContextArgs {
  patientId: string;
  purpose: PurposeOfUse;
  since?: string;
  until?: string;
  maxItems: number;
  codes?: string[];
}

/** The clinical context of the given sections, shaped for agents (communication flattened, empty sections left out). */
async function clinicalContext(query: AgentQuery, tool: string, sections: string[], args: ContextArgs): Promise<Record<string, unknown>> {
  const data = await query<{ clinicalContext: Record<string, any> }>({ tool, purpose: PURPOSES_OF_USE[args.purpose] }, contextQuery(sections), {
    patientId: args.patientId,
    purpose: args.purpose.toUpperCase(),
    sections,
    since: args.since,
    until: args.until,
    maxItems: args.maxItems,
    codes: args.codes,
    ...(sections.includes('COMMUNICATION') ? { messages: args.maxItems } : {}),
  });
  const { patient, ...context } = data.clinicalContext;
  return patient ? { ...context, communication: { preferences: patient.preferences, recentMessages: patient.messages.data } } : context;
}

export function registerClinicalTools(server: McpServer, query: AgentQuery): void {
  server.registerTool(
    'find_patients',
    {
      title: 'Find patients',
      description:
        'Patients of the tenant by exact id or family-name prefix, minimised: id, initials, birth year, gender. Needs no consent; each match is access-logged.',
      inputSchema: { query: z.string().min(1).max(100).describe('Patient id or the start of the family name'), purpose, maxItems, maxBytes },
      outputSchema: {
        patients: z.array(z.object({ id: z.string(), initials: z.string(), birthYear: z.number().nullable(), gender: z.string().nullable() })),
        total: z.number(),
        budget,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const data = await query<{ patients: { data: any[]; pagination: { total: number } } }>(
          { tool: 'find_patients', purpose: PURPOSES_OF_USE[args.purpose] },
          'query McpFindPatients($search: String, $limit: Int) { patients(search: $search, limit: $limit) { data { id name { given family } birthDate gender } pagination { total } } }',
          { search: args.query, limit: args.maxItems },
        );
        const patients = data.patients.data.map((p) => ({
          id: p.id,
          initials: initialsOf(p.name),
          birthYear: p.birthDate ? Number(p.birthDate.slice(0, 4)) : null,
          gender: p.gender,
        }));
        return answer({ patients, total: data.patients.pagination.total }, args.maxBytes);
      }),
  );

  server.registerTool(
    'patient_summary',
    {
      title: 'Patient summary',
      description:
        "Minimised demographics, medications, recent vitals and lab results (LOINC codes, UCUM units, dates), encounters, notes, upcoming appointments, communication preferences and recent message outcomes. Problems/diagnoses: the record has no problem-list template yet, so none are returned. Needs the patient's AI_ASSISTANCE consent.",
      inputSchema: { patientId, purpose, since: date.optional().describe('Only clinical data from this date on'), maxItems, maxBytes },
      outputSchema: {
        ...common,
        demographics: z
          .object({
            patientId: z.string(),
            initials: z.string(),
            birthYear: z.number().nullable(),
            ageYears: z.number().nullable(),
            gender: z.string().nullable(),
            contact: z.object({ phone: z.string().nullable(), email: z.string().nullable() }).nullable().describe('null when redacted'),
          })
          .nullable(),
        medications: z.array(medication),
        vitals: z.array(observation),
        labs: z.array(observation),
        encounters: z.array(encounter),
        notes: z.array(note),
        appointments: z.array(appointment),
        communication,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => guarded(async () => answer(await clinicalContext(query, 'patient_summary', Object.keys(SECTION_FIELDS), args), args.maxBytes)),
  );

  server.registerTool(
    'observations',
    {
      title: 'Observations by code and date range',
      description:
        'Vital signs and lab results of a patient, newest first, optionally only the given LOINC codes (e.g. 8480-6 systolic, 2345-7 glucose) between since and until. Needs AI_ASSISTANCE consent.',
      inputSchema: {
        patientId,
        purpose,
        codes: z
          .array(z.string().regex(/^[A-Za-z0-9.-]{1,32}$/))
          .min(1)
          .max(20)
          .optional()
          .describe('LOINC codes to keep'),
        since: date.optional(),
        until: date.optional(),
        maxItems,
        maxBytes,
      },
      outputSchema: { ...common, vitals: z.array(observation), labs: z.array(observation) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => guarded(async () => answer(await clinicalContext(query, 'observations', ['VITALS', 'LABS'], args), args.maxBytes)),
  );

  server.registerTool(
    'documents',
    {
      title: 'Clinical documents',
      description:
        'Clinical notes of a patient (LOINC document type, date, author; text where role and consent allow), newest first. Needs AI_ASSISTANCE consent.',
      inputSchema: { patientId, purpose, since: date.optional(), until: date.optional(), maxItems, maxBytes },
      outputSchema: { ...common, notes: z.array(note) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => guarded(async () => answer(await clinicalContext(query, 'documents', ['NOTES'], args), args.maxBytes)),
  );

  server.registerTool(
    'appointments',
    {
      title: 'Upcoming appointments',
      description: 'Booked and confirmed appointments of a patient from now (until the given date), soonest first. Needs AI_ASSISTANCE consent.',
      inputSchema: { patientId, purpose, until: date.optional(), maxItems, maxBytes },
      outputSchema: { ...common, appointments: z.array(appointment) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => guarded(async () => answer(await clinicalContext(query, 'appointments', ['APPOINTMENTS'], args), args.maxBytes)),
  );

  server.registerTool(
    'message_history',
    {
      title: 'Message history',
      description:
        "A patient's communication preferences and recent messages with their outcome (channel, template, status, failure reason); message bodies are never returned. Needs AI_ASSISTANCE consent.",
      inputSchema: { patientId, purpose, maxItems, maxBytes },
      outputSchema: { ...common, communication },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => guarded(async () => answer(await clinicalContext(query, 'message_history', ['COMMUNICATION'], args), args.maxBytes)),
  );

  server.registerResource(
    'patient_summary',
    new ResourceTemplate('caregraph://patients/{patientId}/summary', { list: undefined }),
    {
      title: 'Patient summary',
      description: 'The patient_summary tool as a resource (purpose: treatment, default budget); needs AI_ASSISTANCE consent.',
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const id = patientId.parse(String(variables.patientId));
      const summary = await clinicalContext(query, 'resource:patient_summary', Object.keys(SECTION_FIELDS), {
        patientId: id,
        purpose: 'treatment',
        maxItems: 10,
      });
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(fitToBudget(summary, DEFAULT_MAX_BYTES)) }] };
    },
  );

  server.registerResource(
    'templates',
    'caregraph://templates',
    { title: 'Templates', description: 'The clinical templates (openEHR) and message templates of the tenant.', mimeType: 'application/json' },
    async (uri) => {
      const data = await query<{ clinicalTemplates: unknown[]; templates: { data: unknown[] } }>(
        { tool: 'resource:templates', purpose: PURPOSES_OF_USE.operations },
        'query McpTemplates { clinicalTemplates { id name area } templates { data { id language channel } } }',
      );
      return {
        contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ clinical: data.clinicalTemplates, messages: data.templates.data }) }],
      };
    },
  );

  server.registerPrompt(
    'prepare_visit_summary',
    {
      title: 'Prepare a visit summary',
      description: "A pre-visit briefing for the clinician from the patient's summary.",
      argsSchema: { patientId: z.string().describe('The patient id') },
    },
    ({ patientId: id }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: [
              `Prepare a short pre-visit summary for patient ${id}.`,
              `Call patient_summary with patientId "${id}" and purpose "treatment".`,
              'Summarise active medications, the latest vital signs and lab results (values with units and dates, flag abnormal interpretations), recent encounters and the next appointment.',
              'Cite the date of every value. Do not guess anything the summary does not contain; say what is missing or redacted.',
            ].join('\n'),
          },
        },
      ],
    }),
  );

  server.registerPrompt(
    'explain_lab_trend',
    {
      title: 'Explain a lab trend',
      description: 'Explains how one lab value (LOINC code) changed over time.',
      argsSchema: { patientId: z.string().describe('The patient id'), code: z.string().describe('LOINC code, e.g. 2345-7 (glucose)') },
    },
    ({ patientId: id, code }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: [
              `Explain the trend of lab result ${code} for patient ${id}.`,
              `Call observations with patientId "${id}", codes ["${code}"] and purpose "treatment".`,
              'List the values in date order with units and reference ranges, describe the direction and size of the change, and note any interpretation flags.',
              'Do not diagnose; point out what a clinician should review.',
            ].join('\n'),
          },
        },
      ],
    }),
  );
}
