/* eslint-disable */
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type Maybe<T> = T | null;
export type InputMaybe<T> = T | null | undefined;
export type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
export type MakeOptional<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]?: Maybe<T[SubKey]> };
export type MakeMaybe<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]: Maybe<T[SubKey]> };
export type MakeEmpty<T extends { [key: string]: unknown }, K extends keyof T> = { [_ in K]?: never };
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /** A date-time string at UTC, such as 2007-12-03T10:15:30Z, compliant with the `date-time` format outlined in section 5.6 of the RFC 3339 profile of the ISO 8601 standard for representation of dates and times using the Gregorian calendar.This scalar is serialized to a string in ISO 8601 format and parsed from a string in ISO 8601 format. */
  DateTimeISO: { input: string; output: string; }
  /** The `JSON` scalar type represents JSON values as specified by [ECMA-404](http://www.ecma-international.org/publications/files/ECMA-ST/ECMA-404.pdf). */
  JSON: { input: unknown; output: unknown; }
  /** The `JSONObject` scalar type represents JSON objects as specified by [ECMA-404](http://www.ecma-international.org/publications/files/ECMA-ST/ECMA-404.pdf). */
  JSONObject: { input: Record<string, unknown>; output: Record<string, unknown>; }
};

/** What an access-policy rule governs. */
export type AccessArea =
  | 'APPOINTMENT'
  | 'CONSENT'
  | 'DEMOGRAPHICS'
  | 'DOCUMENT'
  | 'ENCOUNTER'
  | 'OBSERVATION'
  | 'ORDER';

/** What the privacy review flags in an access-log entry (docs/admin.md "Privacy"). */
export type AccessFlag =
  /** Read by an AI agent (an OAuth client), an integration, or for a responsible user other than the actor. */
  | 'AGENT'
  /** Declared as emergency treatment (purpose ETREAT). */
  | 'BREAK_GLASS'
  /** The actor read at least 10 patients within 5 minutes either side of this entry. */
  | 'BULK'
  /** No known grounds, or treatment grounds by an actor who is not the practitioner of any of the patient's appointments. */
  | 'OUTSIDE_TREATMENT';

export type AccessFlagCount = {
  __typename?: 'AccessFlagCount';
  entries: Scalars['Int']['output'];
  flag: AccessFlag;
  unreviewed: Scalars['Int']['output'];
};

/** One read of patient data (NEN 7513 access logging). */
export type AccessLogEntry = {
  __typename?: 'AccessLogEntry';
  /** read | list */
  action: Scalars['String']['output'];
  actor: Scalars['String']['output'];
  at: Scalars['DateTimeISO']['output'];
  /** AI agents: the token's OAuth client. */
  client?: Maybe<Scalars['String']['output']>;
  /** NEN 7513: the kind of data read (demographics, encounter, observation, order, document, clinical, ehr, directory); null in older entries. */
  dataCategory?: Maybe<Scalars['String']['output']>;
  entityId: Scalars['String']['output'];
  entityType: Scalars['String']['output'];
  /** NEN 7513: the grounds the access was granted on (treatment, consent:<purpose>, own-record, subject-access, service); null in older entries. */
  grounds?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  patientId: Scalars['ID']['output'];
  /** The purpose of use declared for the read (HL7 v3 PurposeOfUse code, e.g. TREAT). */
  purpose?: Maybe<Scalars['String']['output']>;
  requestId?: Maybe<Scalars['String']['output']>;
  /** NEN 7513: the person answerable for the read (the actor, or whom an agent or integration acts for); null in entries written before it was kept. */
  responsibleUser?: Maybe<Scalars['String']['output']>;
  roles: Array<Scalars['String']['output']>;
  /** AI agents: the MCP tool that read the data. */
  tool?: Maybe<Scalars['String']['output']>;
};

export type AccessLogPage = {
  __typename?: 'AccessLogPage';
  data: Array<AccessLogEntry>;
  pagination: Pagination;
};

/** The privacy officer's review of one access-log entry; final once made. */
export type AccessLogReview = {
  __typename?: 'AccessLogReview';
  entryId: Scalars['ID']['output'];
  /** The entry’s flags when it was reviewed. */
  flags: Array<AccessFlag>;
  note?: Maybe<Scalars['String']['output']>;
  reviewedAt: Scalars['DateTimeISO']['output'];
  reviewedBy: Scalars['String']['output'];
};

/** What one staff role may do with one area of the record in this tenant. */
export type AccessPolicyEntry = {
  __typename?: 'AccessPolicyEntry';
  area: AccessArea;
  canRead: Scalars['Boolean']['output'];
  canWrite: Scalars['Boolean']['output'];
  role: ConfigurableRole;
  /** default | tenant */
  source: Scalars['String']['output'];
  updatedAt?: Maybe<Scalars['DateTimeISO']['output']>;
  updatedBy?: Maybe<Scalars['String']['output']>;
};

/** An access-log entry as the privacy review sees it: its flags and its review. */
export type AccessReviewEntry = {
  __typename?: 'AccessReviewEntry';
  /** read | list */
  action: Scalars['String']['output'];
  actor: Scalars['String']['output'];
  at: Scalars['DateTimeISO']['output'];
  /** AI agents: the token's OAuth client. */
  client?: Maybe<Scalars['String']['output']>;
  /** NEN 7513: the kind of data read (demographics, encounter, observation, order, document, clinical, ehr, directory); null in older entries. */
  dataCategory?: Maybe<Scalars['String']['output']>;
  entityId: Scalars['String']['output'];
  entityType: Scalars['String']['output'];
  flags: Array<AccessFlag>;
  /** NEN 7513: the grounds the access was granted on (treatment, consent:<purpose>, own-record, subject-access, service); null in older entries. */
  grounds?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  patientId: Scalars['ID']['output'];
  /** The purpose of use declared for the read (HL7 v3 PurposeOfUse code, e.g. TREAT). */
  purpose?: Maybe<Scalars['String']['output']>;
  requestId?: Maybe<Scalars['String']['output']>;
  /** NEN 7513: the person answerable for the read (the actor, or whom an agent or integration acts for); null in entries written before it was kept. */
  responsibleUser?: Maybe<Scalars['String']['output']>;
  /** Null while the entry is not reviewed. */
  review?: Maybe<AccessLogReview>;
  roles: Array<Scalars['String']['output']>;
  /** AI agents: the MCP tool that read the data. */
  tool?: Maybe<Scalars['String']['output']>;
};

export type AccessReviewPage = {
  __typename?: 'AccessReviewPage';
  data: Array<AccessReviewEntry>;
  pagination: Pagination;
};

/** The tenant's periodic access-log review report (NEN 7513) for a period. */
export type AccessReviewReport = {
  __typename?: 'AccessReviewReport';
  actors: Scalars['Int']['output'];
  /** The bulk flag: this many patients… */
  bulkPatients: Scalars['Int']['output'];
  /** …within this many minutes either side of an entry. */
  bulkWindowMinutes: Scalars['Int']['output'];
  /** Entries of the period that name a patient. */
  entries: Scalars['Int']['output'];
  /** Entries with at least one flag. */
  flagged: Scalars['Int']['output'];
  flags: Array<AccessFlagCount>;
  from: Scalars['DateTimeISO']['output'];
  generatedAt: Scalars['DateTimeISO']['output'];
  generatedBy: Scalars['String']['output'];
  patients: Scalars['Int']['output'];
  /** Reviews made during the period, newest first (at most 100). */
  reviews: Array<AccessLogReview>;
  /** Reviews made during the period. */
  reviewsDone: Scalars['Int']['output'];
  tenantId: Scalars['String']['output'];
  to: Scalars['DateTimeISO']['output'];
  /** Flagged entries not yet reviewed, newest first (at most 100). */
  unreviewed: Array<AccessReviewEntry>;
  unreviewedFlagged: Scalars['Int']['output'];
};

/** An operational alert, e.g. a webhook subscription disabled after failing. */
export type Alert = {
  __typename?: 'Alert';
  createdAt: Scalars['DateTimeISO']['output'];
  id: Scalars['ID']['output'];
  message: Scalars['String']['output'];
  reason?: Maybe<Scalars['String']['output']>;
  /** webhook.disabled */
  type: Scalars['String']['output'];
  url?: Maybe<Scalars['String']['output']>;
  webhookId?: Maybe<Scalars['ID']['output']>;
};

export type AlertList = {
  __typename?: 'AlertList';
  data: Array<Alert>;
};

/** One error a call of the tenant answered (no patient data: code, message, operation). */
export type ApiErrorView = {
  __typename?: 'ApiErrorView';
  at: Scalars['DateTimeISO']['output'];
  code: Scalars['String']['output'];
  message: Scalars['String']['output'];
  /** Operation name, or its root fields. */
  operation: Scalars['String']['output'];
  /** X-Request-Id of the call, to find it in the logs. */
  requestId: Scalars['String']['output'];
  /** Token subject of the caller. */
  subject: Scalars['String']['output'];
};

/** A booked visit, owned by the clinical record. */
export type Appointment = {
  __typename?: 'Appointment';
  end: Scalars['DateTimeISO']['output'];
  id: Scalars['ID']['output'];
  location?: Maybe<Scalars['String']['output']>;
  patient?: Maybe<Patient>;
  patientId: Scalars['ID']['output'];
  /** Who sees the patient; no two upcoming appointments of one practitioner overlap. */
  practitionerId?: Maybe<Scalars['String']['output']>;
  start: Scalars['DateTimeISO']['output'];
  /** booked | confirmed | cancelled | fulfilled | noshow */
  status: Scalars['String']['output'];
  /** IANA time zone of the appointment's local times (null: UTC); reminders show the time in it. */
  timeZone?: Maybe<Scalars['String']['output']>;
};

export type AppointmentList = {
  __typename?: 'AppointmentList';
  data: Array<Appointment>;
};

export type AppointmentPage = {
  __typename?: 'AppointmentPage';
  data: Array<Appointment>;
  pagination: Pagination;
};

export type AuditChainVerification = {
  __typename?: 'AuditChainVerification';
  brokenAtSeq?: Maybe<Scalars['Int']['output']>;
  brokenRecordId?: Maybe<Scalars['ID']['output']>;
  /** Records checked before the first problem (all when valid). */
  checked: Scalars['Int']['output'];
  problem?: Maybe<Scalars['String']['output']>;
  valid: Scalars['Boolean']['output'];
};

/** An immutable record of one change, hash-chained per tenant. */
export type AuditRecord = {
  __typename?: 'AuditRecord';
  /** create | update | delete | grant | revoke | rotate-keys */
  action: Scalars['String']['output'];
  actor: Scalars['String']['output'];
  after?: Maybe<Scalars['JSON']['output']>;
  at: Scalars['DateTimeISO']['output'];
  /** Previous value; encrypted fields (…Enc) as ciphertext. */
  before?: Maybe<Scalars['JSON']['output']>;
  entityId: Scalars['String']['output'];
  entityType: Scalars['String']['output'];
  hash: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  prevHash: Scalars['String']['output'];
  reason?: Maybe<Scalars['String']['output']>;
  /** Position in the tenant's chain, from 1. */
  seq: Scalars['Int']['output'];
  tenantId: Scalars['String']['output'];
};

export type AuditRecordPage = {
  __typename?: 'AuditRecordPage';
  data: Array<AuditRecord>;
  pagination: Pagination;
};

export type BatchItemError = {
  __typename?: 'BatchItemError';
  code: Scalars['String']['output'];
  message: Scalars['String']['output'];
};

/** One item of a batch: the queued message, or why it was refused. */
export type BatchItemResult = {
  __typename?: 'BatchItemResult';
  createdAt?: Maybe<Scalars['DateTimeISO']['output']>;
  error?: Maybe<BatchItemError>;
  id?: Maybe<Scalars['ID']['output']>;
  index: Scalars['Int']['output'];
  status?: Maybe<Scalars['String']['output']>;
};

export type BatchSendResult = {
  __typename?: 'BatchSendResult';
  accepted: Scalars['Int']['output'];
  rejected: Scalars['Int']['output'];
  results: Array<BatchItemResult>;
};

/** A new appointment. No overlap with an upcoming appointment of the same practitioner or at the same location. */
export type BookAppointmentInput = {
  /** ISO 8601 with an offset (2026-12-01T09:00+01:00), or a local time (2026-12-01T09:00) read in timeZone. */
  end: Scalars['String']['input'];
  location?: InputMaybe<Scalars['String']['input']>;
  patientId: Scalars['ID']['input'];
  practitionerId?: InputMaybe<Scalars['String']['input']>;
  /** ISO 8601 with an offset (2026-12-01T09:00+01:00), or a local time (2026-12-01T09:00) read in timeZone. */
  start: Scalars['String']['input'];
  /** IANA time zone (Europe/Amsterdam); default UTC. */
  timeZone?: InputMaybe<Scalars['String']['input']>;
};

/** Calls counted this minute in one category, by all of the tenant's callers. */
export type CategoryUsage = {
  __typename?: 'CategoryUsage';
  category: Scalars['String']['output'];
  count: Scalars['Int']['output'];
};

export type ChannelPreferences = {
  __typename?: 'ChannelPreferences';
  email: Scalars['Boolean']['output'];
  sms: Scalars['Boolean']['output'];
};

export type ChannelPreferencesInput = {
  email?: InputMaybe<Scalars['Boolean']['input']>;
  sms?: InputMaybe<Scalars['Boolean']['input']>;
};

/** A reusable clinical model from the archetype library. */
export type ClinicalArchetype = {
  __typename?: 'ClinicalArchetype';
  definition: Scalars['JSONObject']['output'];
  description: Scalars['String']['output'];
  id: Scalars['ID']['output'];
};

/** One patient's clinical context: typed, FHIR-coded, purpose-bound and access-logged. */
export type ClinicalContext = {
  __typename?: 'ClinicalContext';
  appointments?: Maybe<Array<ContextAppointment>>;
  coverage: Array<ContextCoverage>;
  demographics?: Maybe<ContextDemographics>;
  disclosure: ContextDisclosure;
  encounters?: Maybe<Array<ContextEncounter>>;
  generatedAt: Scalars['DateTimeISO']['output'];
  labs?: Maybe<Array<ContextObservation>>;
  maxItems: Scalars['Int']['output'];
  medications?: Maybe<Array<ContextMedication>>;
  notes?: Maybe<Array<ContextNote>>;
  /** The patient entity: messaging answers preferences and messages (the COMMUNICATION section). */
  patient: Patient;
  patientId: Scalars['ID']['output'];
  purpose: PurposeOfUse;
  /** The HL7 v3 PurposeOfUse code recorded in the access log. */
  purposeCode: Scalars['String']['output'];
  sections: Array<ClinicalContextSection>;
  since?: Maybe<Scalars['DateTimeISO']['output']>;
  vitals?: Maybe<Array<ContextObservation>>;
};

/** Parts of a clinical context; COMMUNICATION is answered by messaging through `patient` (preferences, messages). */
export type ClinicalContextSection =
  | 'APPOINTMENTS'
  | 'COMMUNICATION'
  | 'DEMOGRAPHICS'
  | 'ENCOUNTERS'
  | 'LABS'
  | 'MEDICATIONS'
  | 'NOTES'
  | 'VITALS';

/** A tenant's operational template: the structure and constraints compositions must follow. */
export type ClinicalTemplate = {
  __typename?: 'ClinicalTemplate';
  area: DataArea;
  createdAt: Scalars['DateTimeISO']['output'];
  createdBy: Scalars['String']['output'];
  /** Constraint tree (see docs/clinical-record.md). */
  definition: Scalars['JSONObject']['output'];
  /** <name>.v<version>, e.g. vital_signs.v1 */
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
};

/** A FHIR Coding: a code from a code system (LOINC, UCUM, EDQM, HL7 v3). */
export type Coding = {
  __typename?: 'Coding';
  code: Scalars['String']['output'];
  display?: Maybe<Scalars['String']['output']>;
  system: Scalars['String']['output'];
};

/** How and when a patient agrees to be contacted. */
export type CommunicationPreferences = {
  __typename?: 'CommunicationPreferences';
  channels: ChannelPreferences;
  language: Scalars['String']['output'];
  quietHours?: Maybe<QuietHours>;
};

/** One version of a composition (a clinical document or record). */
export type Composition = {
  __typename?: 'Composition';
  area: DataArea;
  /** creation | modification | deleted */
  changeType: Scalars['String']['output'];
  committedAt: Scalars['DateTimeISO']['output'];
  committer: Scalars['String']['output'];
  /** null for the deletion version. */
  content?: Maybe<Scalars['JSONObject']['output']>;
  ehrId: Scalars['ID']['output'];
  /** The versioned object's uuid (the same for every version). */
  id: Scalars['ID']['output'];
  /** complete | deleted */
  lifecycleState: Scalars['String']['output'];
  patientId: Scalars['ID']['output'];
  templateId: Scalars['String']['output'];
  /** Version uid <uuid>::<system-id>::<version>. */
  uid: Scalars['ID']['output'];
  version: Scalars['Int']['output'];
};

/** Filters of composition lists; from/to (YYYY-MM-DD or ISO 8601) bound the first commit. */
export type CompositionFilter = {
  area?: InputMaybe<DataArea>;
  ehrId?: InputMaybe<Scalars['ID']['input']>;
  from?: InputMaybe<Scalars['String']['input']>;
  /** Include logically deleted compositions (their deletion version). */
  includeDeleted?: InputMaybe<Scalars['Boolean']['input']>;
  patientId?: InputMaybe<Scalars['ID']['input']>;
  templateId?: InputMaybe<Scalars['String']['input']>;
  to?: InputMaybe<Scalars['String']['input']>;
};

export type CompositionPage = {
  __typename?: 'CompositionPage';
  data: Array<Composition>;
  pagination: Pagination;
};

/** Staff roles whose permissions a tenant admin may change. */
export type ConfigurableRole =
  | 'CLINICIAN'
  | 'INTEGRATION'
  | 'NURSE'
  | 'RECEPTIONIST';

/** A patient's consent for one purpose. */
export type Consent = {
  __typename?: 'Consent';
  changedAt?: Maybe<Scalars['DateTimeISO']['output']>;
  changedBy?: Maybe<Scalars['String']['output']>;
  granted: Scalars['Boolean']['output'];
  note?: Maybe<Scalars['String']['output']>;
  patientId: Scalars['ID']['output'];
  purpose: ConsentPurpose;
  /** false: no decision recorded, the purpose's default applies (messaging granted, others not). */
  recorded: Scalars['Boolean']['output'];
};

export type ConsentPurpose =
  | 'AI_ASSISTANCE'
  | 'DATA_SHARING'
  | 'MESSAGING'
  | 'RESEARCH';

export type ContactDetails = {
  __typename?: 'ContactDetails';
  email?: Maybe<Scalars['String']['output']>;
  phone?: Maybe<Scalars['String']['output']>;
};

/** An upcoming appointment (booked or confirmed). */
export type ContextAppointment = {
  __typename?: 'ContextAppointment';
  end: Scalars['DateTimeISO']['output'];
  id: Scalars['ID']['output'];
  location?: Maybe<Scalars['String']['output']>;
  start: Scalars['DateTimeISO']['output'];
  status: Scalars['String']['output'];
};

/** How much of a section the record holds and how much was returned. */
export type ContextCoverage = {
  __typename?: 'ContextCoverage';
  returned: Scalars['Int']['output'];
  section: ClinicalContextSection;
  total: Scalars['Int']['output'];
  truncated: Scalars['Boolean']['output'];
};

/** Demographics, minimised: initials, birth year and age, gender; contact details only where role and consent allow. */
export type ContextDemographics = {
  __typename?: 'ContextDemographics';
  ageYears?: Maybe<Scalars['Int']['output']>;
  birthYear?: Maybe<Scalars['Int']['output']>;
  /** null when redacted. */
  contact?: Maybe<ContactDetails>;
  gender?: Maybe<Scalars['String']['output']>;
  initials: Scalars['String']['output'];
  patientId: Scalars['ID']['output'];
};

/** What this caller sees beyond coded data. */
export type ContextDisclosure = {
  __typename?: 'ContextDisclosure';
  contactDetails: Scalars['Boolean']['output'];
  freeText: Scalars['Boolean']['output'];
};

/** A clinical visit (FHIR Encounter). */
export type ContextEncounter = {
  __typename?: 'ContextEncounter';
  appointmentId?: Maybe<Scalars['ID']['output']>;
  /** HL7 v3 ActCode encounter class. */
  class?: Maybe<Coding>;
  compositionUid: Scalars['String']['output'];
  end?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  location?: Maybe<Scalars['String']['output']>;
  /** Free text; null when redacted. */
  reason?: Maybe<Scalars['String']['output']>;
  start: Scalars['String']['output'];
  /** in-progress | finished */
  status: Scalars['String']['output'];
};

/** A medication order (FHIR MedicationRequest). */
export type ContextMedication = {
  __typename?: 'ContextMedication';
  asNeeded?: Maybe<Scalars['Boolean']['output']>;
  authoredOn: Scalars['String']['output'];
  compositionUid: Scalars['String']['output'];
  dose?: Maybe<Quantity>;
  dosesPerDay?: Maybe<Scalars['Float']['output']>;
  end?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  /** Free text; null when redacted. */
  instructions?: Maybe<Scalars['String']['output']>;
  medication: Scalars['String']['output'];
  /** EDQM route of administration. */
  route?: Maybe<Coding>;
  start?: Maybe<Scalars['String']['output']>;
  /** active | completed */
  status: Scalars['String']['output'];
};

/** A clinical note (FHIR DocumentReference). */
export type ContextNote = {
  __typename?: 'ContextNote';
  author?: Maybe<Scalars['String']['output']>;
  compositionUid: Scalars['String']['output'];
  date: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  /** The note text; null when redacted. */
  text?: Maybe<Scalars['String']['output']>;
  /** Free text; null when redacted. */
  title?: Maybe<Scalars['String']['output']>;
  /** LOINC document type. */
  type?: Maybe<Coding>;
};

/** A vital sign or laboratory result (FHIR Observation). */
export type ContextObservation = {
  __typename?: 'ContextObservation';
  /** vital-signs | laboratory */
  category: Scalars['String']['output'];
  code: Coding;
  components: Array<ContextObservationComponent>;
  compositionUid: Scalars['String']['output'];
  /** When it was measured or the specimen collected (ISO 8601). */
  effective: Scalars['String']['output'];
  /** The FHIR Observation id. */
  id: Scalars['ID']['output'];
  interpretation?: Maybe<Coding>;
  /** Free text (conclusion, position, rhythm); null when redacted. */
  note?: Maybe<Scalars['String']['output']>;
  referenceRange?: Maybe<Scalars['String']['output']>;
  status: Scalars['String']['output'];
  text?: Maybe<Scalars['String']['output']>;
  value?: Maybe<Quantity>;
};

export type ContextObservationComponent = {
  __typename?: 'ContextObservationComponent';
  code?: Maybe<Coding>;
  interpretation?: Maybe<Coding>;
  referenceRange?: Maybe<Scalars['String']['output']>;
  /** Analyte name when the component has no code. */
  text?: Maybe<Scalars['String']['output']>;
  value?: Maybe<Quantity>;
};

export type CountByKey = {
  __typename?: 'CountByKey';
  count: Scalars['Int']['output'];
  key: Scalars['String']['output'];
};

export type CreateCompositionInput = {
  content: Scalars['JSONObject']['input'];
  ehrId: Scalars['ID']['input'];
  templateId: Scalars['String']['input'];
};

export type CreateWebhookInput = {
  /** A non-empty subset of the six event types. */
  events: Array<Scalars['String']['input']>;
  /** parallel (default) | fifo. */
  ordering?: InputMaybe<Scalars['String']['input']>;
  /** At most this many deliveries a second (1..10000); omitted: no limit. */
  rateLimit?: InputMaybe<Scalars['Int']['input']>;
  /** At least 16 characters (whsec_ + base64 of at least 16 bytes for a Standard Webhooks key); signs every delivery. Omitted: the server generates one and returns it once. */
  secret?: InputMaybe<Scalars['String']['input']>;
  /** https:// URL that must not resolve to an internal address. */
  url: Scalars['String']['input'];
};

/** Data areas of the clinical record that hold compositions. */
export type DataArea =
  | 'DOCUMENT'
  | 'ENCOUNTER'
  | 'OBSERVATION'
  | 'ORDER';

/** The electronic health record of one patient. */
export type Ehr = {
  __typename?: 'Ehr';
  createdAt: Scalars['DateTimeISO']['output'];
  id: Scalars['ID']['output'];
  patientId: Scalars['ID']['output'];
  status: EhrStatus;
};

/** openEHR EHR_STATUS. */
export type EhrStatus = {
  __typename?: 'EhrStatus';
  /** false: the EHR takes no new compositions. */
  isModifiable: Scalars['Boolean']['output'];
  /** false: compositions are left out of lists and queries. */
  isQueryable: Scalars['Boolean']['output'];
  updatedAt: Scalars['DateTimeISO']['output'];
};

/** An event exactly as webhooks receive it: same id, type, timestamp and data. */
export type Event = {
  __typename?: 'Event';
  data: Scalars['JSON']['output'];
  id: Scalars['ID']['output'];
  /** ISO 8601 UTC, as in the webhook body. */
  timestamp: Scalars['String']['output'];
  type: EventType;
};

/** A webhook event type, in upper snake case; WEBHOOK_DISABLED reaches admins only. */
export type EventType =
  | 'APPOINTMENT_BOOKED'
  | 'APPOINTMENT_CANCELLED'
  | 'APPOINTMENT_CONFIRMED'
  | 'APPOINTMENT_RESCHEDULED'
  | 'MESSAGE_CANCELLED'
  | 'MESSAGE_DELIVERED'
  | 'MESSAGE_FAILED'
  | 'MESSAGE_RESPONSE'
  | 'MESSAGE_SENT'
  | 'WEBHOOK_DISABLED';

/** One FHIR search parameter as sent (name may carry a modifier, e.g. name:exact); repeats are kept. */
export type FhirSearchParam = {
  name: Scalars['String']['input'];
  value: Scalars['String']['input'];
};

/** A person name as FHIR HumanName: given names and family name; a patient registered without a name has neither. */
export type HumanName = {
  __typename?: 'HumanName';
  /** Null when the patient has no family name. */
  family?: Maybe<Scalars['String']['output']>;
  /** Empty when the patient has no given name. */
  given: Array<Scalars['String']['output']>;
};

/** A message sent to a patient from a template. */
export type Message = {
  __typename?: 'Message';
  /** The appointment a reminder is about. */
  appointmentId?: Maybe<Scalars['ID']['output']>;
  /** The rendered text. */
  body: Scalars['String']['output'];
  /** sms | email */
  channel: Scalars['String']['output'];
  createdAt: Scalars['DateTimeISO']['output'];
  /** Earliest send time: sendAt when scheduled, later than createdAt when quiet hours hold the message. */
  dueAt: Scalars['DateTimeISO']['output'];
  /** Why delivery failed: a CareGraph error code (RECIPIENT_INVALID, …), a colon, what the provider said. */
  error?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  language: Scalars['String']['output'];
  /** The recipient; demographics come from the clinical record. */
  patient: Patient;
  patientId: Scalars['ID']['output'];
  /** The provider that took the message (twilio, vonage, simulator, smtp, …); null until one has. */
  provider?: Maybe<Scalars['String']['output']>;
  /** The time the sender scheduled it for; null for a send now. */
  sendAt?: Maybe<Scalars['DateTimeISO']['output']>;
  /** scheduled | queued | sending | sent | delivered | failed | cancelled */
  status: Scalars['String']['output'];
  statusHistory: Array<StatusChange>;
  /** Email subject. */
  subject?: Maybe<Scalars['String']['output']>;
  templateId: Scalars['String']['output'];
  templateVersion: Scalars['Int']['output'];
  updatedAt: Scalars['DateTimeISO']['output'];
  /** The template variables, as validated. */
  variables: Scalars['JSONObject']['output'];
};

export type MessagePage = {
  __typename?: 'MessagePage';
  data: Array<Message>;
  pagination: Pagination;
};

/** A message template with typed variables, one per language; `version` counts its edits. */
export type MessageTemplate = {
  __typename?: 'MessageTemplate';
  /** {{name}} inserts a variable; {{#name}}…{{/name}} only when it is given. */
  body: Scalars['String']['output'];
  channel: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  language: Scalars['String']['output'];
  name: Scalars['String']['output'];
  /** Email subject (may use variables). */
  subject?: Maybe<Scalars['String']['output']>;
  variables: Array<TemplateVariable>;
  version: Scalars['Int']['output'];
};

/** Messages created in the window: how many, their statuses now, and why the failed ones failed. */
export type MessageVolume = {
  __typename?: 'MessageVolume';
  byStatus: Array<CountByKey>;
  failureReasons: Array<CountByKey>;
  total: Scalars['Int']['output'];
};

/** What erasing a patient's messaging data deleted (rows per table). */
export type MessagingErasure = {
  __typename?: 'MessagingErasure';
  events: Scalars['Int']['output'];
  messages: Scalars['Int']['output'];
  patientId: Scalars['ID']['output'];
  preferenceChanges: Scalars['Int']['output'];
  preferences: Scalars['Int']['output'];
  replies: Scalars['Int']['output'];
  webhookDeliveries: Scalars['Int']['output'];
};

/** One retention period of messaging data for the tenant. */
export type MessagingRetentionPeriod = {
  __typename?: 'MessagingRetentionPeriod';
  /** messages | webhook_deliveries */
  category: Scalars['String']['output'];
  days: Scalars['Int']['output'];
  /** The regulation the default follows. */
  rule: Scalars['String']['output'];
  /** default | tenant */
  source: Scalars['String']['output'];
};

export type Mutation = {
  __typename?: 'Mutation';
  /** Books an appointment (status booked); emits appointment.booked and schedules its reminder. */
  bookAppointment: Appointment;
  /** Cancels an appointment; emits appointment.cancelled and cancels its reminder; a second cancel changes nothing. */
  cancelAppointment: Appointment;
  /** Takes back a scheduled or queued message: it is cancelled and never reaches a provider; CONFLICT from any later status (cancelled included). */
  cancelMessage: Message;
  /** Commits a new composition (version 1) to an EHR. */
  createComposition: Composition;
  /** Platform admin: a new tenant, active at once; CONFLICT when the id exists. */
  createOrganization: Organization;
  /** Registers a patient and creates their EHR. */
  createPatient: Patient;
  /** Admin: a new template, or a new language of one; CONFLICT when it exists. */
  createTemplate: MessageTemplate;
  /** Subscribes a URL; without a secret one is generated and returned, this once, as secret. */
  createWebhook: Webhook;
  /** Logical delete: commits a final version without content. Returns that version. */
  deleteComposition: Composition;
  /** Deletes the subscription with its delivery log; returns its id. */
  deleteWebhook: Scalars['ID']['output'];
  /** Admin, on the patient's erasure request: deletes their messages, replies, preferences, events and webhook deliveries. */
  erasePatientMessagingData: MessagingErasure;
  /** FHIR conditional create (If-None-Exist): `{created, resource}`; one match returns it with created false, more than one is PRECONDITION_FAILED. */
  fhirConditionalCreate: Scalars['JSONObject']['output'];
  /** FHIR conditional delete (DELETE [type]?[search]): deletes the one match (true), nothing without a match (false); more than one is PRECONDITION_FAILED. */
  fhirConditionalDelete: Scalars['Boolean']['output'];
  /** FHIR conditional update (PUT [type]?[search]): `{created, resource}`; no match creates, more than one is PRECONDITION_FAILED. */
  fhirConditionalUpdate: Scalars['JSONObject']['output'];
  /** FHIR create (Patient, vital-signs Observation); returns the stored resource. */
  fhirCreate: Scalars['JSONObject']['output'];
  /** FHIR delete (Observation): a new, audited version that deletes it (reads then answer GONE); ifMatch is the expected versionId. False when it was deleted already. */
  fhirDelete: Scalars['Boolean']['output'];
  /** FHIR patch with a JSON Patch document (RFC 6902) (Patient, vital-signs Observation, Appointment); ifMatch is the expected versionId. Returns the stored resource. */
  fhirPatch: Scalars['JSONObject']['output'];
  /** FHIR update (Patient, vital-signs Observation); ifMatch is the expected versionId. */
  fhirUpdate: Scalars['JSONObject']['output'];
  /** Records the patient's consent for a purpose. */
  grantConsent: Consent;
  /** Admin (privacy review): marks 1..100 access-log entries reviewed, with a note; audited. An entry already reviewed is a CONFLICT. */
  markAccessLogReviewed: Array<AccessLogReview>;
  /** IHE MHD ITI-65 Provide Document Bundle: a FHIR transaction Bundle (SubmissionSet List, DocumentReferences, Binaries), stored in the XDS registry and repository like ITI-41, all or nothing; answers the transaction-response Bundle (URLs relative to the FHIR service base). */
  mhdProvideDocumentBundle: Scalars['JSONObject']['output'];
  /** Commits the versions of an openEHR CONTRIBUTION together (all or none). */
  openehrCommitContribution: OpenEhrResult;
  openehrCreateComposition: OpenEhrResult;
  /** Creates the EHR's directory (a FOLDER tree whose items are compositions of the EHR). */
  openehrCreateDirectory: OpenEhrResult;
  /** A new EHR (id given or a new UUID) with an optional EHR_STATUS. */
  openehrCreateEhr: OpenEhrResult;
  openehrDeleteComposition: OpenEhrResult;
  /** Deletes the EHR's directory (a final version); ifMatch names the latest version. */
  openehrDeleteDirectory: OpenEhrResult;
  /** Deletes the tags with a key (at any target path) of a composition or EHR_STATUS. */
  openehrDeleteItemTags: OpenEhrResult;
  /** Replaces the tags of a composition or EHR_STATUS: [{key, value?, target_path?}] (an empty list removes them). */
  openehrSetItemTags: OpenEhrResult;
  /** Stores an AQL query under a name and version (1.0.0, or the next patch version, when none is given). */
  openehrStoreQuery: OpenEhrResult;
  openehrUpdateComposition: OpenEhrResult;
  /** Replaces the EHR's directory; ifMatch names the latest version. */
  openehrUpdateDirectory: OpenEhrResult;
  openehrUpdateEhrStatus: OpenEhrResult;
  openehrUploadTemplate: OpenEhrResult;
  /** Sends the patient's C-CDA 2.1 CCD to the external XDS repository (XDS_REPOSITORY_URL) with ITI-41 over SOAP 1.2/MTOM. CONFLICT when no repository is configured; UPSTREAM_ERROR when the repository refuses (details carry its XDS error codes) or cannot be reached. Audited either way. */
  publishPatientCcd: XdsPublication;
  /** An inbound SMS (provider webhook, or an integration posting one). */
  receiveSms: ReplyResult;
  /** SMS provider delivery report (provider identity only); true when it moved the message. */
  recordDeliveryStatus: Scalars['Boolean']['output'];
  /** Re-sends, with their original event ids, the events of the window the subscription never received (all: every one), as a job; CONFLICT when disabled. */
  recoverWebhook: WebhookRecovery;
  /** Queues a reminder filled from the appointment (date, time, location); CONFLICT when it is cancelled. */
  remindAppointment: Message;
  /** Starts a subject access export of a patient's data (admin, or the patient for their own). */
  requestPatientExport: PatientExport;
  /** Moves an upcoming appointment (back to booked); emits appointment.rescheduled and moves its reminder. */
  rescheduleAppointment: Appointment;
  /** Admin, on the patient's erasure or restriction request: the record is no longer processed and is deleted at the end of its retention period. */
  restrictPatientRecord: RecordRestriction;
  /** Platform admin: serves a suspended tenant again. */
  resumeOrganization: Organization;
  /** Records the withdrawal of the patient's consent for a purpose. */
  revokeConsent: Consent;
  /** Queues one message (or schedules it, with sendAt); a repeated idempotencyKey returns the first message (CONFLICT for another request). */
  sendMessage: Message;
  /** 1..1000 messages, each accepted or refused on its own. */
  sendMessages: BatchSendResult;
  /** Sends an example event to the subscription and reports the first attempt. */
  sendTestEvent: WebhookTestResult;
  /** Admin: sets one role × area permission for the tenant. */
  setAccessPolicy: AccessPolicyEntry;
  /** Admin: sets or lifts a legal hold on a patient record. */
  setLegalHold: RecordRestriction;
  /** Admin: sets one retention period (days) of messaging data for the tenant, in its organisation's settings (logged as an organisation change). */
  setMessagingRetention: Array<MessagingRetentionPeriod>;
  /** Admin: sets one retention period (days) of clinical data for the tenant. */
  setRecordRetention: Array<RecordRetentionPeriod>;
  /** Sets a single reminder lead time, 0..20160 minutes (admin), replacing any cadence; applies to appointments booked or moved from now on. Stored in the organisation's settings (reminderLeadMinutes) and logged as an organisation change. */
  setReminderLeadTime: ReminderSettings;
  /** Sets the reminder cadence (admin): 1..10 distinct lead times of 0..20160 minutes, one reminder per lead time, replacing a single lead time; applies to appointments booked or moved from now on. Stored in the organisation's settings (reminderLeadTimes) and logged as an organisation change. */
  setReminderLeadTimes: ReminderSettings;
  /** Replaces the tenant's own reply keywords of one language (admin); empty lists remove them, the built-in words stay. A word that already does something else for that language (or English) is refused. Stored in the organisation's settings (replyKeywords) and logged as an organisation change. */
  setReplyKeywords: Array<ReplyKeywordSet>;
  /** Admin: injects a simulated patient reply to a message. */
  simulateReply: ReplyResult;
  /** Platform admin: every call in the tenant is refused (403) until it is resumed. */
  suspendOrganization: Organization;
  /** Sets an appointment to confirmed or cancelled; a cancelled one cannot be confirmed (CONFLICT). */
  updateAppointmentStatus: Appointment;
  /** Commits a new version; ifMatch must be the latest version uid (else PRECONDITION_FAILED). */
  updateComposition: Composition;
  /** Changes EHR_STATUS (admin, clinician). */
  updateEhrStatus: Ehr;
  /** Platform admin: renames a tenant and/or replaces its settings (limits included); audited. */
  updateOrganization: Organization;
  /** Changes demographics; a patient may change only their own contact details. */
  updatePatient: Patient;
  /** Changes a patient's preferences; every change is logged. */
  updatePreferences: CommunicationPreferences;
  /** Admin: publishes the next version of a template in one language. */
  updateTemplate: MessageTemplate;
  /** Changes url, events, secret (the previous secret keeps signing beside the new one for WEBHOOK_SECRET_OVERLAP); status active re-enables (admin only). */
  updateWebhook: Webhook;
  /** Admin: adds a template version. Existing ids are immutable (CONFLICT unless identical). */
  uploadTemplate: ClinicalTemplate;
  /** ITI-41 Provide and Register Document Set-b: a ProvideAndRegisterDocumentSetRequest; answers rs:RegistryResponse. */
  xdsProvideAndRegister: Scalars['String']['output'];
  /** ITI-42 Register Document Set-b: a lcm:SubmitObjectsRequest; answers rs:RegistryResponse. */
  xdsRegister: Scalars['String']['output'];
};


export type MutationBookAppointmentArgs = {
  input: BookAppointmentInput;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationCancelAppointmentArgs = {
  id: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationCancelMessageArgs = {
  id: Scalars['ID']['input'];
};


export type MutationCreateCompositionArgs = {
  input: CreateCompositionInput;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationCreateOrganizationArgs = {
  id: Scalars['ID']['input'];
  name: Scalars['String']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  settings?: InputMaybe<OrganizationSettingsInput>;
};


export type MutationCreatePatientArgs = {
  input: PatientCreateInput;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationCreateTemplateArgs = {
  id: Scalars['ID']['input'];
  input: TemplateInput;
};


export type MutationCreateWebhookArgs = {
  input: CreateWebhookInput;
};


export type MutationDeleteCompositionArgs = {
  id: Scalars['ID']['input'];
  ifMatch?: InputMaybe<Scalars['ID']['input']>;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationDeleteWebhookArgs = {
  id: Scalars['ID']['input'];
};


export type MutationErasePatientMessagingDataArgs = {
  patientId: Scalars['ID']['input'];
};


export type MutationFhirConditionalCreateArgs = {
  ifNoneExist: Scalars['String']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  resource: Scalars['JSONObject']['input'];
};


export type MutationFhirConditionalDeleteArgs = {
  query: Scalars['String']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  resourceType: Scalars['String']['input'];
};


export type MutationFhirConditionalUpdateArgs = {
  ifMatch?: InputMaybe<Scalars['String']['input']>;
  query: Scalars['String']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  resource: Scalars['JSONObject']['input'];
  resourceType: Scalars['String']['input'];
};


export type MutationFhirCreateArgs = {
  reason?: InputMaybe<Scalars['String']['input']>;
  resource: Scalars['JSONObject']['input'];
};


export type MutationFhirDeleteArgs = {
  id: Scalars['ID']['input'];
  ifMatch?: InputMaybe<Scalars['String']['input']>;
  reason?: InputMaybe<Scalars['String']['input']>;
  resourceType: Scalars['String']['input'];
};


export type MutationFhirPatchArgs = {
  id: Scalars['ID']['input'];
  ifMatch?: InputMaybe<Scalars['String']['input']>;
  patch: Scalars['JSON']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  resourceType: Scalars['String']['input'];
};


export type MutationFhirUpdateArgs = {
  id: Scalars['ID']['input'];
  ifMatch?: InputMaybe<Scalars['String']['input']>;
  reason?: InputMaybe<Scalars['String']['input']>;
  resource: Scalars['JSONObject']['input'];
  resourceType: Scalars['String']['input'];
};


export type MutationGrantConsentArgs = {
  note?: InputMaybe<Scalars['String']['input']>;
  patientId: Scalars['ID']['input'];
  purpose: ConsentPurpose;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationMarkAccessLogReviewedArgs = {
  entryIds: Array<Scalars['ID']['input']>;
  note?: InputMaybe<Scalars['String']['input']>;
};


export type MutationMhdProvideDocumentBundleArgs = {
  bundle: Scalars['JSONObject']['input'];
};


export type MutationOpenehrCommitContributionArgs = {
  contribution: Scalars['JSON']['input'];
  ehrId: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationOpenehrCreateCompositionArgs = {
  audit?: InputMaybe<Scalars['JSONObject']['input']>;
  composition?: InputMaybe<Scalars['JSONObject']['input']>;
  ehrId: Scalars['ID']['input'];
  format?: InputMaybe<Scalars['String']['input']>;
  itemTags?: InputMaybe<Scalars['JSONObject']['input']>;
  reason?: InputMaybe<Scalars['String']['input']>;
  templateId?: InputMaybe<Scalars['String']['input']>;
  xml?: InputMaybe<Scalars['String']['input']>;
};


export type MutationOpenehrCreateDirectoryArgs = {
  audit?: InputMaybe<Scalars['JSONObject']['input']>;
  ehrId: Scalars['ID']['input'];
  folder: Scalars['JSONObject']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationOpenehrCreateEhrArgs = {
  audit?: InputMaybe<Scalars['JSONObject']['input']>;
  ehrId?: InputMaybe<Scalars['ID']['input']>;
  ehrStatus?: InputMaybe<Scalars['JSON']['input']>;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationOpenehrDeleteCompositionArgs = {
  audit?: InputMaybe<Scalars['JSONObject']['input']>;
  ehrId: Scalars['ID']['input'];
  precedingVersionUid: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationOpenehrDeleteDirectoryArgs = {
  audit?: InputMaybe<Scalars['JSONObject']['input']>;
  ehrId: Scalars['ID']['input'];
  ifMatch: Scalars['String']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationOpenehrDeleteItemTagsArgs = {
  ehrId: Scalars['ID']['input'];
  key: Scalars['String']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  targetType: Scalars['String']['input'];
  uid: Scalars['String']['input'];
};


export type MutationOpenehrSetItemTagsArgs = {
  ehrId: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  tags: Scalars['JSON']['input'];
  targetType: Scalars['String']['input'];
  uid: Scalars['String']['input'];
};


export type MutationOpenehrStoreQueryArgs = {
  name: Scalars['String']['input'];
  q: Scalars['String']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  type?: InputMaybe<Scalars['String']['input']>;
  version?: InputMaybe<Scalars['String']['input']>;
};


export type MutationOpenehrUpdateCompositionArgs = {
  audit?: InputMaybe<Scalars['JSONObject']['input']>;
  composition?: InputMaybe<Scalars['JSONObject']['input']>;
  ehrId: Scalars['ID']['input'];
  format?: InputMaybe<Scalars['String']['input']>;
  ifMatch: Scalars['String']['input'];
  itemTags?: InputMaybe<Scalars['JSONObject']['input']>;
  reason?: InputMaybe<Scalars['String']['input']>;
  templateId?: InputMaybe<Scalars['String']['input']>;
  versionedObjectUid: Scalars['ID']['input'];
  xml?: InputMaybe<Scalars['String']['input']>;
};


export type MutationOpenehrUpdateDirectoryArgs = {
  audit?: InputMaybe<Scalars['JSONObject']['input']>;
  ehrId: Scalars['ID']['input'];
  folder: Scalars['JSONObject']['input'];
  ifMatch: Scalars['String']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationOpenehrUpdateEhrStatusArgs = {
  audit?: InputMaybe<Scalars['JSONObject']['input']>;
  ehrId: Scalars['ID']['input'];
  ehrStatus?: InputMaybe<Scalars['JSON']['input']>;
  ifMatch: Scalars['String']['input'];
  itemTags?: InputMaybe<Scalars['JSONObject']['input']>;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationOpenehrUploadTemplateArgs = {
  reason?: InputMaybe<Scalars['String']['input']>;
  template?: InputMaybe<Scalars['JSON']['input']>;
};


export type MutationPublishPatientCcdArgs = {
  patientId: Scalars['ID']['input'];
};


export type MutationReceiveSmsArgs = {
  body: Scalars['String']['input'];
  from: Scalars['String']['input'];
  providerMessageId?: InputMaybe<Scalars['String']['input']>;
};


export type MutationRecordDeliveryStatusArgs = {
  errorCode?: InputMaybe<Scalars['String']['input']>;
  provider?: InputMaybe<Scalars['String']['input']>;
  providerMessageId: Scalars['String']['input'];
  status: Scalars['String']['input'];
};


export type MutationRecoverWebhookArgs = {
  id: Scalars['ID']['input'];
  input: RecoverWebhookInput;
};


export type MutationRemindAppointmentArgs = {
  appointmentId: Scalars['ID']['input'];
  channel?: InputMaybe<Scalars['String']['input']>;
  idempotencyKey?: InputMaybe<Scalars['String']['input']>;
  templateId?: InputMaybe<Scalars['String']['input']>;
};


export type MutationRequestPatientExportArgs = {
  patientId: Scalars['ID']['input'];
};


export type MutationRescheduleAppointmentArgs = {
  id: Scalars['ID']['input'];
  input: RescheduleAppointmentInput;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationRestrictPatientRecordArgs = {
  patientId: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationResumeOrganizationArgs = {
  id: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationRevokeConsentArgs = {
  note?: InputMaybe<Scalars['String']['input']>;
  patientId: Scalars['ID']['input'];
  purpose: ConsentPurpose;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationSendMessageArgs = {
  idempotencyKey?: InputMaybe<Scalars['String']['input']>;
  input: SendMessageInput;
};


export type MutationSendMessagesArgs = {
  idempotencyKey?: InputMaybe<Scalars['String']['input']>;
  itemKeys?: InputMaybe<Array<Scalars['String']['input']>>;
  messages: Array<SendMessageInput>;
};


export type MutationSendTestEventArgs = {
  id: Scalars['ID']['input'];
  type?: InputMaybe<Scalars['String']['input']>;
};


export type MutationSetAccessPolicyArgs = {
  area: AccessArea;
  canRead: Scalars['Boolean']['input'];
  canWrite: Scalars['Boolean']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  role: ConfigurableRole;
};


export type MutationSetLegalHoldArgs = {
  hold: Scalars['Boolean']['input'];
  patientId: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationSetMessagingRetentionArgs = {
  category: Scalars['String']['input'];
  days: Scalars['Int']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationSetRecordRetentionArgs = {
  category: Scalars['String']['input'];
  days: Scalars['Int']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationSetReminderLeadTimeArgs = {
  leadMinutes: Scalars['Int']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationSetReminderLeadTimesArgs = {
  leadTimes: Array<Scalars['Int']['input']>;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationSetReplyKeywordsArgs = {
  help?: InputMaybe<Array<Scalars['String']['input']>>;
  language: Scalars['String']['input'];
  optIn?: InputMaybe<Array<Scalars['String']['input']>>;
  optOut?: InputMaybe<Array<Scalars['String']['input']>>;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationSimulateReplyArgs = {
  body: Scalars['String']['input'];
  messageId: Scalars['ID']['input'];
};


export type MutationSuspendOrganizationArgs = {
  id: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationUpdateAppointmentStatusArgs = {
  id: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  requestKey?: InputMaybe<Scalars['String']['input']>;
  status: Scalars['String']['input'];
};


export type MutationUpdateCompositionArgs = {
  content: Scalars['JSONObject']['input'];
  id: Scalars['ID']['input'];
  ifMatch: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationUpdateEhrStatusArgs = {
  ehrId: Scalars['ID']['input'];
  isModifiable?: InputMaybe<Scalars['Boolean']['input']>;
  isQueryable?: InputMaybe<Scalars['Boolean']['input']>;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationUpdateOrganizationArgs = {
  id: Scalars['ID']['input'];
  name?: InputMaybe<Scalars['String']['input']>;
  reason?: InputMaybe<Scalars['String']['input']>;
  settings?: InputMaybe<OrganizationSettingsInput>;
};


export type MutationUpdatePatientArgs = {
  id: Scalars['ID']['input'];
  input: PatientUpdateInput;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationUpdatePreferencesArgs = {
  input: PreferencesInput;
  patientId: Scalars['ID']['input'];
};


export type MutationUpdateTemplateArgs = {
  id: Scalars['ID']['input'];
  input: TemplateInput;
};


export type MutationUpdateWebhookArgs = {
  id: Scalars['ID']['input'];
  input: UpdateWebhookInput;
};


export type MutationUploadTemplateArgs = {
  input: UploadTemplateInput;
  reason?: InputMaybe<Scalars['String']['input']>;
};


export type MutationXdsProvideAndRegisterArgs = {
  request: Scalars['String']['input'];
};


export type MutationXdsRegisterArgs = {
  request: Scalars['String']['input'];
};

/** An alert still open: its webhook subscription is still disabled. */
export type OpenAlert = {
  __typename?: 'OpenAlert';
  createdAt: Scalars['DateTimeISO']['output'];
  id: Scalars['ID']['output'];
  message: Scalars['String']['output'];
  type: Scalars['String']['output'];
  webhookId?: Maybe<Scalars['ID']['output']>;
};

/** One openEHR answer: its JSON body, version uid and time. */
export type OpenEhrResult = {
  __typename?: 'OpenEhrResult';
  body?: Maybe<Scalars['JSON']['output']>;
  /** Logically deleted. */
  deleted?: Maybe<Scalars['Boolean']['output']>;
  /** A composition's or EHR_STATUS's item tags: {versionedObject, version}, each a list of {key, value?, target_path?}. */
  itemTags?: Maybe<Scalars['JSONObject']['output']>;
  lastModified?: Maybe<Scalars['DateTimeISO']['output']>;
  /** Version uid of the answered resource (the EHR id for an EHR). */
  uid?: Maybe<Scalars['String']['output']>;
};

/** A tenant of the platform. */
export type Organization = {
  __typename?: 'Organization';
  /** Calls this minute per category, recent errors and recent callers (support, admin, platform admin). */
  activity: OrganizationActivity;
  /** The change log, newest first (whoever may read the organisation). */
  changes: Array<OrganizationChangeView>;
  createdAt: Scalars['DateTimeISO']['output'];
  /** Webhook health, open alerts and message volume of the last day (support, admin, platform admin). */
  health: OrganizationHealth;
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  /** The limit of every category for this tenant now. */
  rateLimits: Array<RateLimitInForceView>;
  settings: OrganizationSettingsView;
  /** active | suspended (every call in a suspended tenant is refused with FORBIDDEN). */
  status: Scalars['String']['output'];
  updatedAt: Scalars['DateTimeISO']['output'];
};


/** A tenant of the platform. */
export type OrganizationChangesArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
};

/** The tenant's API activity as the gateways record it (bounded: the latest 50 errors and 100 callers of the last day). */
export type OrganizationActivity = {
  __typename?: 'OrganizationActivity';
  recentCallers: Array<RecentCaller>;
  recentErrors: Array<ApiErrorView>;
  usage: Array<CategoryUsage>;
};

/** A change made to an organisation (append-only log). */
export type OrganizationChangeView = {
  __typename?: 'OrganizationChangeView';
  /** create | suspend | resume | update */
  action: Scalars['String']['output'];
  actor: Scalars['String']['output'];
  at: Scalars['DateTimeISO']['output'];
  id: Scalars['ID']['output'];
  reason?: Maybe<Scalars['String']['output']>;
};

/** What is going wrong for an organisation, without any patient data. */
export type OrganizationHealth = {
  __typename?: 'OrganizationHealth';
  messages: MessageVolume;
  openAlerts: Array<OpenAlert>;
  /** Start of the window (the last 24 hours). */
  since: Scalars['DateTimeISO']['output'];
  webhooks: Array<WebhookHealthView>;
};

export type OrganizationList = {
  __typename?: 'OrganizationList';
  data: Array<Organization>;
};

/** The whole settings: limits, lead time and periods left out fall back to the defaults. */
export type OrganizationSettingsInput = {
  rateLimits?: InputMaybe<Array<RateLimitSettingInput>>;
  /** Minutes, 0..20160. */
  reminderLeadMinutes?: InputMaybe<Scalars['Int']['input']>;
  /** 1..10 distinct lead times in minutes, 0..20160 each; wins over reminderLeadMinutes. */
  reminderLeadTimes?: InputMaybe<Array<Scalars['Int']['input']>>;
  /** Words a word of the same language (or English) already has for another action are refused. */
  replyKeywords?: InputMaybe<Array<ReplyKeywordsInput>>;
  retention?: InputMaybe<Array<RetentionSettingInput>>;
  supportEmail?: InputMaybe<Scalars['String']['input']>;
};

/** An organisation's settings. */
export type OrganizationSettingsView = {
  __typename?: 'OrganizationSettingsView';
  /** This tenant's own limits (arranged with the provider); other categories use the deployment's. */
  rateLimits: Array<RateLimitSetting>;
  /** Minutes before an appointment its automatic reminder goes out; null: the default (1440). */
  reminderLeadMinutes?: Maybe<Scalars['Int']['output']>;
  /** The reminder cadence, minutes before an appointment of each reminder; null: the single reminderLeadMinutes. */
  reminderLeadTimes?: Maybe<Array<Scalars['Int']['output']>>;
  /** This tenant's own reply keywords per language, beside the built-in ones. */
  replyKeywords: Array<ReplyKeywordsView>;
  /** This tenant's own retention periods of messaging data; other categories use the default. */
  retention: Array<RetentionSettingView>;
  /** Where the provider's support desk reaches the organisation. */
  supportEmail?: Maybe<Scalars['String']['output']>;
};

/** Position of a page in a list. */
export type Pagination = {
  __typename?: 'Pagination';
  limit: Scalars['Int']['output'];
  offset: Scalars['Int']['output'];
  total: Scalars['Int']['output'];
};

/** Patient demographics, owned by the clinical record. */
export type Patient = {
  __typename?: 'Patient';
  /** The patient's appointments, soonest first; from/to bound the start (YYYY-MM-DD or ISO 8601). */
  appointments: AppointmentPage;
  /** YYYY-MM-DD */
  birthDate?: Maybe<Scalars['String']['output']>;
  /** All compositions of the patient, newest first. */
  compositions: CompositionPage;
  /** One entry per purpose (recorded decision or default). */
  consents: Array<Consent>;
  contact: ContactDetails;
  /** Clinical notes, letters, reports. */
  documents: CompositionPage;
  ehr?: Maybe<Ehr>;
  /** The patient's EHR id. */
  ehrId: Scalars['String']['output'];
  /** Clinical visits and interactions. */
  encounters: CompositionPage;
  /** male | female | other | unknown */
  gender?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  /** The patient's messages, newest first. */
  messages: MessagePage;
  name: HumanName;
  /** The soonest booked or confirmed appointment from now; null when none. */
  nextAppointment?: Maybe<Appointment>;
  /** Vital signs, lab results, assessments. */
  observations: CompositionPage;
  /** Medications, procedures, referrals. */
  orders: CompositionPage;
  preferences: CommunicationPreferences;
};


/** Patient demographics, owned by the clinical record. */
export type PatientAppointmentsArgs = {
  from?: InputMaybe<Scalars['String']['input']>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  status?: InputMaybe<Scalars['String']['input']>;
  to?: InputMaybe<Scalars['String']['input']>;
};


/** Patient demographics, owned by the clinical record. */
export type PatientCompositionsArgs = {
  area?: InputMaybe<DataArea>;
  from?: InputMaybe<Scalars['String']['input']>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  templateId?: InputMaybe<Scalars['String']['input']>;
  to?: InputMaybe<Scalars['String']['input']>;
};


/** Patient demographics, owned by the clinical record. */
export type PatientDocumentsArgs = {
  from?: InputMaybe<Scalars['String']['input']>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  templateId?: InputMaybe<Scalars['String']['input']>;
  to?: InputMaybe<Scalars['String']['input']>;
};


/** Patient demographics, owned by the clinical record. */
export type PatientEncountersArgs = {
  from?: InputMaybe<Scalars['String']['input']>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  templateId?: InputMaybe<Scalars['String']['input']>;
  to?: InputMaybe<Scalars['String']['input']>;
};


/** Patient demographics, owned by the clinical record. */
export type PatientMessagesArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
};


/** Patient demographics, owned by the clinical record. */
export type PatientObservationsArgs = {
  from?: InputMaybe<Scalars['String']['input']>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  templateId?: InputMaybe<Scalars['String']['input']>;
  to?: InputMaybe<Scalars['String']['input']>;
};


/** Patient demographics, owned by the clinical record. */
export type PatientOrdersArgs = {
  from?: InputMaybe<Scalars['String']['input']>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  templateId?: InputMaybe<Scalars['String']['input']>;
  to?: InputMaybe<Scalars['String']['input']>;
};

/** A new patient; an EHR `ehr-<id>` is created with it. */
export type PatientCreateInput = {
  /** YYYY-MM-DD */
  birthDate?: InputMaybe<Scalars['String']['input']>;
  email?: InputMaybe<Scalars['String']['input']>;
  family: Scalars['String']['input'];
  /** male | female | other | unknown */
  gender?: InputMaybe<Scalars['String']['input']>;
  givenNames: Array<Scalars['String']['input']>;
  /** Defaults to a generated `p-<uuid>`. */
  id?: InputMaybe<Scalars['ID']['input']>;
  /** E.164, e.g. +31612345678 */
  phone?: InputMaybe<Scalars['String']['input']>;
};

/** A subject access export (GDPR art. 15/20): queued → running → done (or failed); the ZIP is kept until expiresAt. */
export type PatientExport = {
  __typename?: 'PatientExport';
  /** Chunks of the finished ZIP (patientExportChunk seq 0..chunks-1). */
  chunks: Scalars['Int']['output'];
  completedAt?: Maybe<Scalars['DateTimeISO']['output']>;
  createdAt: Scalars['DateTimeISO']['output'];
  error?: Maybe<Scalars['String']['output']>;
  expiresAt: Scalars['DateTimeISO']['output'];
  id: Scalars['ID']['output'];
  patientId: Scalars['ID']['output'];
  /** Percent of the archive written. */
  progress: Scalars['Int']['output'];
  /** Bytes of the finished ZIP. */
  size?: Maybe<Scalars['Int']['output']>;
  /** queued | running | done | failed | expired */
  status: Scalars['String']['output'];
};

export type PatientPage = {
  __typename?: 'PatientPage';
  data: Array<Patient>;
  pagination: Pagination;
};

/** Fields to change; omitted fields stay as they are, null clears. */
export type PatientUpdateInput = {
  birthDate?: InputMaybe<Scalars['String']['input']>;
  email?: InputMaybe<Scalars['String']['input']>;
  family?: InputMaybe<Scalars['String']['input']>;
  gender?: InputMaybe<Scalars['String']['input']>;
  givenNames?: InputMaybe<Array<Scalars['String']['input']>>;
  phone?: InputMaybe<Scalars['String']['input']>;
};

/** A population statistic computed over the tenant's records: an AQL answer of aggregates only, over many patients. */
export type PopulationQueryEntry = {
  __typename?: 'PopulationQueryEntry';
  actor: Scalars['String']['output'];
  at: Scalars['DateTimeISO']['output'];
  /** AI agents: the token's OAuth client. */
  client?: Maybe<Scalars['String']['output']>;
  /** Compositions the statistic was computed from. */
  compositions: Scalars['Int']['output'];
  /** A digest of the query and its parameters: the same statistic asked again has the same one. */
  entityId: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  /** AQL */
  language: Scalars['String']['output'];
  parameters: Scalars['JSON']['output'];
  /** Patients the statistic was computed from: at least this many where patientsExact is false. */
  patients: Scalars['Int']['output'];
  /** Whether patients is exact; false for a COUNT summed from the kept counts of values, where only a lower bound (at least 10) was checked. */
  patientsExact: Scalars['Boolean']['output'];
  /** The purpose of use declared for the query (HL7 v3 PurposeOfUse code). */
  purpose?: Maybe<Scalars['String']['output']>;
  query: Scalars['String']['output'];
  requestId?: Maybe<Scalars['String']['output']>;
  roles: Array<Scalars['String']['output']>;
  /** AI agents: the MCP tool that ran the query. */
  tool?: Maybe<Scalars['String']['output']>;
};

export type PopulationQueryPage = {
  __typename?: 'PopulationQueryPage';
  data: Array<PopulationQueryEntry>;
  pagination: Pagination;
};

/** Fields left out stay as they are; quietHours: null removes quiet hours. */
export type PreferencesInput = {
  channels?: InputMaybe<ChannelPreferencesInput>;
  language?: InputMaybe<Scalars['String']['input']>;
  quietHours?: InputMaybe<QuietHoursInput>;
};

/** Why the data is read; recorded in the access log as the HL7 v3 PurposeOfUse code (TREAT, CAREMGT, PATRQT, HOPERAT, ETREAT for emergency, which the privacy review flags as break-glass). */
export type PurposeOfUse =
  | 'CARE_MANAGEMENT'
  | 'EMERGENCY'
  | 'OPERATIONS'
  | 'PATIENT_REQUESTED'
  | 'TREATMENT';

/** A FHIR Quantity with a UCUM unit. */
export type Quantity = {
  __typename?: 'Quantity';
  code: Scalars['String']['output'];
  system: Scalars['String']['output'];
  unit: Scalars['String']['output'];
  value: Scalars['Float']['output'];
};

export type Query = {
  __typename?: 'Query';
  /** Who read a patient's record, newest first (admin, or the patient for their own). */
  accessLog: AccessLogPage;
  /** Admin (privacy review): the tenant's access log with flags and reviews, newest first; limit 1..100. */
  accessLogReview: AccessReviewPage;
  /** Admin: the tenant's effective role × area permissions. */
  accessPolicy: Array<AccessPolicyEntry>;
  /** Admin (privacy review): the tenant's periodic access-log review report for a period. */
  accessReviewReport: AccessReviewReport;
  /** Alerts of the tenant, newest first (e.g. webhook.disabled). */
  alerts: AlertList;
  appointment?: Maybe<Appointment>;
  /** Appointments starting between from and to (YYYY-MM-DD inclusive, UTC, or ISO 8601); default today..today+7d. */
  appointments: AppointmentList;
  /** openEHR AQL 1.1 (docs/exchange.md#aql): a RESULTSET {meta, q, columns, rows}. */
  aqlQuery: Scalars['JSONObject']['output'];
  /** Admin: the tenant's audit trail, newest first; limit 1..100 (default 20). */
  auditRecords: AuditRecordPage;
  /** One composition version (uid, or the latest by id) as a C-CDA 2.1 document (CDA R2 XML). */
  cdaCompositionDocument: Scalars['String']['output'];
  /** The patient's C-CDA 2.1 Continuity of Care Document (CDA R2 XML) from their current record; readable areas only. */
  cdaPatientDocument: Scalars['String']['output'];
  /** The archetype library templates build on. */
  clinicalArchetypes: Array<ClinicalArchetype>;
  /** One patient's clinical context for a declared purpose of use: minimised demographics, medications, vitals and lab results with units and dates, encounters, notes, upcoming appointments (and, through `patient`, communication). Newest first, at most maxItems (1..100, default 10) per section; since/until bound clinical dates. AI agents need the patient's AI_ASSISTANCE consent. */
  clinicalContext: ClinicalContext;
  /** One clinical template; NOT_FOUND when unknown. */
  clinicalTemplate: ClinicalTemplate;
  /** The tenant's clinical templates, by id. */
  clinicalTemplates: Array<ClinicalTemplate>;
  /** A composition version by uid (a bare uuid names the latest); NOT_FOUND when unknown. */
  composition: Composition;
  /** Every version of a composition, oldest first. */
  compositionHistory: Array<Composition>;
  /** Latest versions of compositions, newest first; limit 1..100 (default 20). */
  compositions: CompositionPage;
  /** Admin (privacy review): one patient's consents (one per purpose, recorded or default), or every consent decision recorded in the tenant. */
  consentRegister: Array<Consent>;
  /** An EHR by id; NOT_FOUND when unknown or not visible. */
  ehr: Ehr;
  /** FHIR CapabilityStatement of the FHIR facade (without its address). */
  fhirCapabilities: Scalars['JSONObject']['output'];
  /** FHIR instance history: a history Bundle, newest version first; its URLs are relative to the FHIR service base. */
  fhirHistory: Scalars['JSONObject']['output'];
  /** Patient/{id}/$everything: the patient and every resource about them; the Bundle's URLs are relative to the FHIR service base. */
  fhirPatientEverything: Scalars['JSONObject']['output'];
  /** FHIR read, or vread with versionId. */
  fhirRead: Scalars['JSONObject']['output'];
  /** FHIR type search: a searchset Bundle with total and next links; its URLs are relative to the FHIR service base. strict (Prefer: handling=strict) refuses unknown parameters; otherwise they are ignored and reported in an OperationOutcome entry. */
  fhirSearch: Scalars['JSONObject']['output'];
  /** Admin and the messaging service: the ids of the tenant's patients under legal hold. */
  legalHolds: Array<Scalars['ID']['output']>;
  /** One message; NOT_FOUND when unknown. */
  message: Message;
  /** Messages newest first; limit 1..100 (default 20), offset ≥ 0. */
  messages: MessagePage;
  /** Admin: the tenant's retention periods of messaging data. */
  messagingRetention: Array<MessagingRetentionPeriod>;
  /** A composition by versioned object uid (latest) or version uid. */
  openehrComposition: OpenEhrResult;
  openehrCompositionVersion: OpenEhrResult;
  openehrContribution: OpenEhrResult;
  /** The EHR's directory FOLDER: the latest version, one by uid or at a time; path (folder names joined by /) narrows to a sub-folder. */
  openehrDirectory: OpenEhrResult;
  /** EHR by id, or by subject id and namespace. */
  openehrEhr: OpenEhrResult;
  openehrEhrStatus: OpenEhrResult;
  openehrEhrStatusRevisionHistory: OpenEhrResult;
  /** An EHR_STATUS version (ORIGINAL_VERSION) by uid, at a time, or the latest. */
  openehrEhrStatusVersion: OpenEhrResult;
  /** Every readable tag in an EHR, filtered by key, value and target path (each exact). */
  openehrEhrTags: OpenEhrResult;
  /** The tags of a composition or EHR_STATUS (body: ITEM_TAG list). */
  openehrItemTags: OpenEhrResult;
  openehrRevisionHistory: OpenEhrResult;
  /** Runs a stored query like aqlQuery: {meta, name, q, columns, rows}. */
  openehrRunStoredQuery: Scalars['JSONObject']['output'];
  /** Every version of the stored queries whose name starts with `name` (all of them without). */
  openehrStoredQueries: OpenEhrResult;
  /** One stored query definition: {name, type, version, saved, q}. */
  openehrStoredQuery: OpenEhrResult;
  /** A template: an OPT as its XML (a string) or a CareGraph JSON template, or either as a web template (webTemplate: true). */
  openehrTemplate: OpenEhrResult;
  /** An example composition of an operational template. */
  openehrTemplateExample: OpenEhrResult;
  openehrTemplates: OpenEhrResult;
  openehrVersionedComposition: OpenEhrResult;
  openehrVersionedEhrStatus: OpenEhrResult;
  /** One tenant: platform admins any, support and admins their own; NOT_FOUND otherwise. */
  organization: Organization;
  /** Platform admin: every tenant. */
  organizations: OrganizationList;
  /** A patient of the caller's tenant; null when unknown. */
  patient?: Maybe<Patient>;
  /** An export job: status and progress. */
  patientExport: PatientExport;
  /** One chunk (base64) of a finished export's ZIP; reading chunk 0 records a download. */
  patientExportChunk: Scalars['String']['output'];
  /** Staff: patients by exact id or family-name prefix, family-name order; limit 1..100 (default 20). */
  patients: PatientPage;
  /** Admin: the population statistics computed over the tenant's records, newest first; their access-log entries name no patient. */
  populationQueries: PopulationQueryPage;
  /** Admin: whether a patient's record is restricted, when it will be deleted, and its legal hold. */
  recordRestriction: RecordRestriction;
  /** Admin (privacy review): the tenant's records restricted on an erasure or restriction request, or under legal hold. */
  recordRestrictions: Array<RecordRights>;
  /** Admin: the tenant's retention periods of clinical data. */
  recordRetention: Array<RecordRetentionPeriod>;
  /** The tenant's reminder settings (admin). */
  reminderSettings: ReminderSettings;
  /** The tenant's reply keywords per language, English first (admin). */
  replyKeywords: Array<ReplyKeywordSet>;
  /** One template (the given language, else English); NOT_FOUND when unknown. */
  template: MessageTemplate;
  /** Every template, each language variant on its own. */
  templates: TemplateList;
  /** Admin: recomputes the tenant's access-log hash chain and reports the first broken entry, or an emptied or shortened log. */
  verifyAccessLog: AuditChainVerification;
  /** Admin: recomputes the tenant's audit hash chain and reports the first broken record. */
  verifyAuditChain: AuditChainVerification;
  /** Who is calling: subject, roles, tenants and token expiry (any authenticated caller). */
  viewer: Viewer;
  /** One subscription; NOT_FOUND when unknown. */
  webhook: Webhook;
  /** Deliveries newest first, each with every attempt; limit 1..100 (default 20). */
  webhookDeliveries: WebhookDeliveryPage;
  /** One recovery of a subscription, with its progress; NOT_FOUND when unknown. */
  webhookRecovery: WebhookRecovery;
  /** The webhook subscriptions of the tenant (admin, integration). */
  webhooks: WebhookList;
  /** ITI-43 Retrieve Document Set: a xdsb:RetrieveDocumentSetRequest; answers xdsb:RetrieveDocumentSetResponse, documents inline (base64). */
  xdsRetrieve: Scalars['String']['output'];
  /** ITI-18 Registry Stored Query: a query:AdhocQueryRequest; answers query:AdhocQueryResponse. */
  xdsStoredQuery: Scalars['String']['output'];
};


export type QueryAccessLogArgs = {
  from?: InputMaybe<Scalars['String']['input']>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  patientId: Scalars['ID']['input'];
  to?: InputMaybe<Scalars['String']['input']>;
};


export type QueryAccessLogReviewArgs = {
  actor?: InputMaybe<Scalars['String']['input']>;
  flag?: InputMaybe<AccessFlag>;
  flagged?: InputMaybe<Scalars['Boolean']['input']>;
  from?: InputMaybe<Scalars['String']['input']>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  patientId?: InputMaybe<Scalars['ID']['input']>;
  reviewed?: InputMaybe<Scalars['Boolean']['input']>;
  to?: InputMaybe<Scalars['String']['input']>;
};


export type QueryAccessReviewReportArgs = {
  from: Scalars['String']['input'];
  to: Scalars['String']['input'];
};


export type QueryAlertsArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryAppointmentArgs = {
  id: Scalars['ID']['input'];
};


export type QueryAppointmentsArgs = {
  from?: InputMaybe<Scalars['String']['input']>;
  to?: InputMaybe<Scalars['String']['input']>;
};


export type QueryAqlQueryArgs = {
  fetch?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  parameters?: InputMaybe<Scalars['JSONObject']['input']>;
  q: Scalars['String']['input'];
};


export type QueryAuditRecordsArgs = {
  actor?: InputMaybe<Scalars['String']['input']>;
  entityId?: InputMaybe<Scalars['String']['input']>;
  entityType?: InputMaybe<Scalars['String']['input']>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryCdaCompositionDocumentArgs = {
  uid: Scalars['ID']['input'];
};


export type QueryCdaPatientDocumentArgs = {
  patientId: Scalars['ID']['input'];
};


export type QueryClinicalContextArgs = {
  codes?: InputMaybe<Array<Scalars['String']['input']>>;
  maxItems?: InputMaybe<Scalars['Int']['input']>;
  patientId: Scalars['ID']['input'];
  purpose: PurposeOfUse;
  sections?: InputMaybe<Array<ClinicalContextSection>>;
  since?: InputMaybe<Scalars['String']['input']>;
  until?: InputMaybe<Scalars['String']['input']>;
};


export type QueryClinicalTemplateArgs = {
  id: Scalars['ID']['input'];
};


export type QueryClinicalTemplatesArgs = {
  area?: InputMaybe<DataArea>;
};


export type QueryCompositionArgs = {
  uid: Scalars['ID']['input'];
};


export type QueryCompositionHistoryArgs = {
  id: Scalars['ID']['input'];
};


export type QueryCompositionsArgs = {
  filter?: InputMaybe<CompositionFilter>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryConsentRegisterArgs = {
  patientId?: InputMaybe<Scalars['ID']['input']>;
};


export type QueryEhrArgs = {
  id: Scalars['ID']['input'];
};


export type QueryFhirHistoryArgs = {
  id: Scalars['ID']['input'];
  resourceType: Scalars['String']['input'];
};


export type QueryFhirPatientEverythingArgs = {
  params: Array<FhirSearchParam>;
  patientId: Scalars['ID']['input'];
};


export type QueryFhirReadArgs = {
  id: Scalars['ID']['input'];
  resourceType: Scalars['String']['input'];
  versionId?: InputMaybe<Scalars['String']['input']>;
};


export type QueryFhirSearchArgs = {
  params: Array<FhirSearchParam>;
  resourceType: Scalars['String']['input'];
  strict?: InputMaybe<Scalars['Boolean']['input']>;
};


export type QueryMessageArgs = {
  id: Scalars['ID']['input'];
};


export type QueryMessagesArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  patientId?: InputMaybe<Scalars['ID']['input']>;
  status?: InputMaybe<Scalars['String']['input']>;
};


export type QueryOpenehrCompositionArgs = {
  ehrId: Scalars['ID']['input'];
  format?: InputMaybe<Scalars['String']['input']>;
  uid: Scalars['ID']['input'];
};


export type QueryOpenehrCompositionVersionArgs = {
  ehrId: Scalars['ID']['input'];
  versionAtTime?: InputMaybe<Scalars['String']['input']>;
  versionUid?: InputMaybe<Scalars['String']['input']>;
  versionedObjectUid: Scalars['ID']['input'];
};


export type QueryOpenehrContributionArgs = {
  contributionUid: Scalars['ID']['input'];
  ehrId: Scalars['ID']['input'];
};


export type QueryOpenehrDirectoryArgs = {
  ehrId: Scalars['ID']['input'];
  path?: InputMaybe<Scalars['String']['input']>;
  versionAtTime?: InputMaybe<Scalars['String']['input']>;
  versionUid?: InputMaybe<Scalars['String']['input']>;
};


export type QueryOpenehrEhrArgs = {
  ehrId?: InputMaybe<Scalars['ID']['input']>;
  subjectId?: InputMaybe<Scalars['String']['input']>;
  subjectNamespace?: InputMaybe<Scalars['String']['input']>;
};


export type QueryOpenehrEhrStatusArgs = {
  ehrId: Scalars['ID']['input'];
  versionAtTime?: InputMaybe<Scalars['String']['input']>;
  versionUid?: InputMaybe<Scalars['String']['input']>;
};


export type QueryOpenehrEhrStatusRevisionHistoryArgs = {
  ehrId: Scalars['ID']['input'];
};


export type QueryOpenehrEhrStatusVersionArgs = {
  ehrId: Scalars['ID']['input'];
  versionAtTime?: InputMaybe<Scalars['String']['input']>;
  versionUid?: InputMaybe<Scalars['String']['input']>;
};


export type QueryOpenehrEhrTagsArgs = {
  ehrId: Scalars['ID']['input'];
  key?: InputMaybe<Scalars['String']['input']>;
  targetPath?: InputMaybe<Scalars['String']['input']>;
  value?: InputMaybe<Scalars['String']['input']>;
};


export type QueryOpenehrItemTagsArgs = {
  ehrId: Scalars['ID']['input'];
  targetType: Scalars['String']['input'];
  uid: Scalars['String']['input'];
};


export type QueryOpenehrRevisionHistoryArgs = {
  ehrId: Scalars['ID']['input'];
  versionedObjectUid: Scalars['ID']['input'];
};


export type QueryOpenehrRunStoredQueryArgs = {
  ehrId?: InputMaybe<Scalars['String']['input']>;
  fetch?: InputMaybe<Scalars['Int']['input']>;
  name: Scalars['String']['input'];
  offset?: InputMaybe<Scalars['Int']['input']>;
  parameters?: InputMaybe<Scalars['JSONObject']['input']>;
  version?: InputMaybe<Scalars['String']['input']>;
};


export type QueryOpenehrStoredQueriesArgs = {
  name?: InputMaybe<Scalars['String']['input']>;
};


export type QueryOpenehrStoredQueryArgs = {
  name: Scalars['String']['input'];
  version?: InputMaybe<Scalars['String']['input']>;
};


export type QueryOpenehrTemplateArgs = {
  templateId: Scalars['ID']['input'];
  webTemplate?: InputMaybe<Scalars['Boolean']['input']>;
};


export type QueryOpenehrTemplateExampleArgs = {
  format?: InputMaybe<Scalars['String']['input']>;
  templateId: Scalars['ID']['input'];
};


export type QueryOpenehrVersionedCompositionArgs = {
  ehrId: Scalars['ID']['input'];
  versionedObjectUid: Scalars['ID']['input'];
};


export type QueryOpenehrVersionedEhrStatusArgs = {
  ehrId: Scalars['ID']['input'];
};


export type QueryOrganizationArgs = {
  id: Scalars['ID']['input'];
};


export type QueryPatientArgs = {
  id: Scalars['ID']['input'];
};


export type QueryPatientExportArgs = {
  id: Scalars['ID']['input'];
};


export type QueryPatientExportChunkArgs = {
  id: Scalars['ID']['input'];
  seq: Scalars['Int']['input'];
};


export type QueryPatientsArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  search?: InputMaybe<Scalars['String']['input']>;
};


export type QueryPopulationQueriesArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryRecordRestrictionArgs = {
  patientId: Scalars['ID']['input'];
};


export type QueryTemplateArgs = {
  id: Scalars['ID']['input'];
  language?: InputMaybe<Scalars['String']['input']>;
};


export type QueryWebhookArgs = {
  id: Scalars['ID']['input'];
};


export type QueryWebhookDeliveriesArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
  status?: InputMaybe<Scalars['String']['input']>;
  webhookId: Scalars['ID']['input'];
};


export type QueryWebhookRecoveryArgs = {
  id: Scalars['ID']['input'];
  webhookId: Scalars['ID']['input'];
};


export type QueryXdsRetrieveArgs = {
  request: Scalars['String']['input'];
};


export type QueryXdsStoredQueryArgs = {
  request: Scalars['String']['input'];
};

export type QuietHours = {
  __typename?: 'QuietHours';
  /** HH:MM */
  end: Scalars['String']['output'];
  /** HH:MM */
  start: Scalars['String']['output'];
  /** IANA time zone, e.g. Europe/Amsterdam */
  timezone: Scalars['String']['output'];
};

export type QuietHoursInput = {
  end: Scalars['String']['input'];
  start: Scalars['String']['input'];
  timezone: Scalars['String']['input'];
};

/** The limit a category is held to for this tenant now. */
export type RateLimitInForceView = {
  __typename?: 'RateLimitInForceView';
  category: Scalars['String']['output'];
  /** Calls per minute per token subject. */
  limit: Scalars['Int']['output'];
  /** True when it is this tenant's own limit rather than the deployment's. */
  overridden: Scalars['Boolean']['output'];
};

/** A per-minute limit of one rate-limit category (MESSAGES_SEND, MESSAGES_READ, PATIENTS, TEMPLATES, WEBHOOKS, EHR). */
export type RateLimitSetting = {
  __typename?: 'RateLimitSetting';
  category: Scalars['String']['output'];
  limit: Scalars['Int']['output'];
};

export type RateLimitSettingInput = {
  /** MESSAGES_SEND, MESSAGES_READ, PATIENTS, TEMPLATES, WEBHOOKS or EHR. */
  category: Scalars['String']['input'];
  /** Calls per minute, 1..1000000. */
  limit: Scalars['Int']['input'];
};

/** A caller (token subject) seen lately. */
export type RecentCaller = {
  __typename?: 'RecentCaller';
  lastSeenAt: Scalars['DateTimeISO']['output'];
  roles: Array<Scalars['String']['output']>;
  subject: Scalars['String']['output'];
};

/** A patient's record under the data subject's rights (GDPR art. 17/18): restriction, scheduled deletion, legal hold. */
export type RecordRestriction = {
  __typename?: 'RecordRestriction';
  /** When the retention purge deletes the restricted record (unless under legal hold). */
  deleteAfter?: Maybe<Scalars['DateTimeISO']['output']>;
  /** A legal hold keeps the record and its access log past deleteAfter. */
  legalHold: Scalars['Boolean']['output'];
  patientId: Scalars['ID']['output'];
  /** When the record was restricted; null while it is processed normally. */
  restrictedAt?: Maybe<Scalars['DateTimeISO']['output']>;
};

/** One retention period of the clinical record's data for the tenant. */
export type RecordRetentionPeriod = {
  __typename?: 'RecordRetentionPeriod';
  /** clinical_record | audit | access_log */
  category: Scalars['String']['output'];
  days: Scalars['Int']['output'];
  /** The regulation the default follows. */
  rule: Scalars['String']['output'];
  /** default | tenant */
  source: Scalars['String']['output'];
};

/** A record restricted or under legal hold, with who set the restriction and the hold and why (their audit records). */
export type RecordRights = {
  __typename?: 'RecordRights';
  /** When the retention purge deletes the restricted record (unless under legal hold). */
  deleteAfter?: Maybe<Scalars['DateTimeISO']['output']>;
  /** A legal hold keeps the record and its access log past deleteAfter. */
  legalHold: Scalars['Boolean']['output'];
  /** Who set the legal hold (null while there is none). */
  legalHoldBy?: Maybe<Scalars['String']['output']>;
  legalHoldReason?: Maybe<Scalars['String']['output']>;
  patientId: Scalars['ID']['output'];
  /** When the record was restricted; null while it is processed normally. */
  restrictedAt?: Maybe<Scalars['DateTimeISO']['output']>;
  /** Who restricted the record (null while it is not restricted). */
  restrictedBy?: Maybe<Scalars['String']['output']>;
  /** The reason given with the restriction, e.g. the erasure request. */
  restrictionReason?: Maybe<Scalars['String']['output']>;
};

/** The window of a recovery. */
export type RecoverWebhookInput = {
  /** true: re-send every event of the window, received ones too. */
  all?: InputMaybe<Scalars['Boolean']['input']>;
  /** ISO 8601 with an offset; within the event retention (WEBHOOK_RETENTION_DAYS). */
  since: Scalars['String']['input'];
  /** ISO 8601 with an offset; default (and at most) now. */
  until?: InputMaybe<Scalars['String']['input']>;
};

/** The tenant's automatic appointment reminders. */
export type ReminderSettings = {
  __typename?: 'ReminderSettings';
  /** Minutes before an appointment its first reminder goes out: the longest of leadTimes (default 1440, a day); quiet hours move it. */
  leadMinutes: Scalars['Int']['output'];
  /** The cadence: minutes before an appointment of each of its reminders, longest first (default [1440]). */
  leadTimes: Array<Scalars['Int']['output']>;
};

/** The reply keywords in force for patients of one language (beside English): built-in and the tenant's own, upper case without accents. */
export type ReplyKeywordSet = {
  __typename?: 'ReplyKeywordSet';
  /** Words answered with the automatic help reply. */
  help: Array<Scalars['String']['output']>;
  /** Language code, e.g. 'nl'. */
  language: Scalars['String']['output'];
  /** Words that turn it on again. */
  optIn: Array<Scalars['String']['output']>;
  /** Words that turn the patient's sms off. */
  optOut: Array<Scalars['String']['output']>;
};

export type ReplyKeywordsInput = {
  help?: InputMaybe<Array<Scalars['String']['input']>>;
  /** Two- or three-letter language code ('en' for every patient). */
  language: Scalars['String']['input'];
  optIn?: InputMaybe<Array<Scalars['String']['input']>>;
  /** One word each (letters and digits, at most 32), at most 20. */
  optOut?: InputMaybe<Array<Scalars['String']['input']>>;
};

/** The tenant's own reply keywords of one language, matched beside the built-in ones (English for every patient). */
export type ReplyKeywordsView = {
  __typename?: 'ReplyKeywordsView';
  /** Words answered with the automatic help reply. */
  help: Array<Scalars['String']['output']>;
  /** Language code, e.g. 'nl'. */
  language: Scalars['String']['output'];
  /** Words that turn it on again. */
  optIn: Array<Scalars['String']['output']>;
  /** Words that turn the patient's sms off. */
  optOut: Array<Scalars['String']['output']>;
};

/** A patient reply and what it did. */
export type ReplyResult = {
  __typename?: 'ReplyResult';
  /** none | confirmed | cancelled | opted_out | opted_in | help (answered with the automatic help reply) | ignored | pending (a C/X reply the clinical record has not taken yet; retried) */
  action: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  /** The keyword the reply was (upper case, without accents): a reminder word (C, YES, CONFIRM, X, CANCEL) or an opt-out, opt-in or help word of English or the patient's language. */
  keyword?: Maybe<Scalars['String']['output']>;
  /** The message replied to. */
  messageId: Scalars['ID']['output'];
  patientId: Scalars['ID']['output'];
  receivedAt: Scalars['DateTimeISO']['output'];
};

/** A new slot for an upcoming appointment; practitioner, location and time zone stay unless given (null clears). */
export type RescheduleAppointmentInput = {
  /** ISO 8601 with an offset (2026-12-01T09:00+01:00), or a local time (2026-12-01T09:00) read in timeZone. */
  end: Scalars['String']['input'];
  location?: InputMaybe<Scalars['String']['input']>;
  practitionerId?: InputMaybe<Scalars['String']['input']>;
  /** ISO 8601 with an offset (2026-12-01T09:00+01:00), or a local time (2026-12-01T09:00) read in timeZone. */
  start: Scalars['String']['input'];
  timeZone?: InputMaybe<Scalars['String']['input']>;
};

export type RetentionSettingInput = {
  /** messages or webhook_deliveries. */
  category: Scalars['String']['input'];
  /** Days, 1..36525. */
  days: Scalars['Int']['input'];
};

/** A retention period (days) of one messaging category (messages, webhook_deliveries). */
export type RetentionSettingView = {
  __typename?: 'RetentionSettingView';
  category: Scalars['String']['output'];
  days: Scalars['Int']['output'];
};

export type SendMessageInput = {
  /** sms | email */
  channel: Scalars['String']['input'];
  patientId: Scalars['ID']['input'];
  /** ISO 8601 with an offset, 1 minute to 35 days ahead: the message stays scheduled until then. Absent: send now. */
  sendAt?: InputMaybe<Scalars['String']['input']>;
  templateId: Scalars['String']['input'];
  /** Variable name → string value. */
  variables?: InputMaybe<Scalars['JSONObject']['input']>;
};

/** One status a message reached, and when. */
export type StatusChange = {
  __typename?: 'StatusChange';
  at: Scalars['DateTimeISO']['output'];
  error?: Maybe<Scalars['String']['output']>;
  status: Scalars['String']['output'];
};

export type Subscription = {
  __typename?: 'Subscription';
  /** Every webhook event of the caller's tenant (all types when `types` is omitted); a patient token sees its own patient's only. */
  events: Event;
  /** Each status change of the matching messages (queued, sending, sent, delivered, failed); select any Message field. */
  messageStatusChanged: Message;
};


export type SubscriptionEventsArgs = {
  types?: InputMaybe<Array<EventType>>;
};


export type SubscriptionMessageStatusChangedArgs = {
  messageId?: InputMaybe<Scalars['ID']['input']>;
  patientId?: InputMaybe<Scalars['ID']['input']>;
};

export type TemplateInput = {
  body: Scalars['String']['input'];
  /** sms | email */
  channel: Scalars['String']['input'];
  /** Language tag, default 'en'. */
  language?: InputMaybe<Scalars['String']['input']>;
  name: Scalars['String']['input'];
  subject?: InputMaybe<Scalars['String']['input']>;
  variables: Array<TemplateVariableInput>;
};

export type TemplateList = {
  __typename?: 'TemplateList';
  data: Array<MessageTemplate>;
};

export type TemplateVariable = {
  __typename?: 'TemplateVariable';
  name: Scalars['String']['output'];
  required: Scalars['Boolean']['output'];
  /** string | date (YYYY-MM-DD) | time (HH:MM) */
  type: Scalars['String']['output'];
};

export type TemplateVariableInput = {
  name: Scalars['String']['input'];
  required: Scalars['Boolean']['input'];
  /** string | date | time */
  type: Scalars['String']['input'];
};

export type UpdateWebhookInput = {
  events?: InputMaybe<Array<Scalars['String']['input']>>;
  /** parallel | fifo. */
  ordering?: InputMaybe<Scalars['String']['input']>;
  /** At most this many deliveries a second (1..10000); an explicit null removes the limit. */
  rateLimit?: InputMaybe<Scalars['Int']['input']>;
  secret?: InputMaybe<Scalars['String']['input']>;
  /** active (re-enable; admin only) | disabled (pause) */
  status?: InputMaybe<Scalars['String']['input']>;
  url?: InputMaybe<Scalars['String']['input']>;
};

export type UploadTemplateInput = {
  area: DataArea;
  definition: Scalars['JSONObject']['input'];
  id: Scalars['ID']['input'];
  name: Scalars['String']['input'];
};

/** Who is calling: the token as the platform reads it. */
export type Viewer = {
  __typename?: 'Viewer';
  roles: Array<Scalars['String']['output']>;
  subject: Scalars['String']['output'];
  /** The tenant this call acts in ('*' for a platform admin acting in no tenant). */
  tenantId: Scalars['String']['output'];
  /** Every tenant the token grants. */
  tenants: Array<Scalars['String']['output']>;
  /** When the token expires. */
  tokenExpiresAt?: Maybe<Scalars['DateTimeISO']['output']>;
};

/** A webhook subscription. Its secret is write-only: only a secret the server generated is returned, once. */
export type Webhook = {
  __typename?: 'Webhook';
  createdAt: Scalars['DateTimeISO']['output'];
  disabledAt?: Maybe<Scalars['DateTimeISO']['output']>;
  /** Why the subscription was disabled. */
  disabledReason?: Maybe<Scalars['String']['output']>;
  /** Event types delivered, e.g. message.delivered. */
  events: Array<Scalars['String']['output']>;
  /** Failed attempts since the last successful one (0 after a success). */
  failureStreak: Scalars['Int']['output'];
  id: Scalars['ID']['output'];
  /** When the latest failed attempt was made. */
  lastFailureAt?: Maybe<Scalars['DateTimeISO']['output']>;
  /** The error of the latest failed attempt. */
  lastFailureError?: Maybe<Scalars['String']['output']>;
  /** parallel (default) | fifo: one delivery at a time, in event order, a retried event holding back the later ones. */
  ordering: Scalars['String']['output'];
  /** At most this many deliveries a second to the endpoint; null: no limit. */
  rateLimit?: Maybe<Scalars['Int']['output']>;
  /** The secret the server generated (whsec_…) for a subscription created without one: in that createWebhook answer only, null everywhere else. */
  secret?: Maybe<Scalars['String']['output']>;
  /** active | disabled */
  status: Scalars['String']['output'];
  updatedAt: Scalars['DateTimeISO']['output'];
  url: Scalars['String']['output'];
};

/** One attempt to deliver an event to a subscription. */
export type WebhookAttempt = {
  __typename?: 'WebhookAttempt';
  at: Scalars['DateTimeISO']['output'];
  /** 1 = first attempt, 2.. = retries. */
  attempt: Scalars['Int']['output'];
  durationMs: Scalars['Int']['output'];
  error?: Maybe<Scalars['String']['output']>;
  /** The first KiB of the answer body. */
  responseSnippet?: Maybe<Scalars['String']['output']>;
  /** The X-Webhook-Signature header sent with this attempt; null when no request was made. */
  signature?: Maybe<Scalars['String']['output']>;
  /** HTTP status of the answer; null when none came. */
  statusCode?: Maybe<Scalars['Int']['output']>;
  success: Scalars['Boolean']['output'];
};

/** One event for one subscription, with every attempt made. */
export type WebhookDelivery = {
  __typename?: 'WebhookDelivery';
  attemptCount: Scalars['Int']['output'];
  attempts: Array<WebhookAttempt>;
  createdAt: Scalars['DateTimeISO']['output'];
  eventId: Scalars['ID']['output'];
  eventType: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  /** When the next attempt is due (pending only). */
  nextAttemptAt?: Maybe<Scalars['DateTimeISO']['output']>;
  /** The exact JSON body sent (and signed) on every attempt. */
  payload: Scalars['String']['output'];
  /** pending | succeeded | failed | cancelled */
  status: Scalars['String']['output'];
  updatedAt: Scalars['DateTimeISO']['output'];
  webhookId: Scalars['ID']['output'];
};

export type WebhookDeliveryPage = {
  __typename?: 'WebhookDeliveryPage';
  data: Array<WebhookDelivery>;
  pagination: Pagination;
};

/** A webhook subscription as support sees it: its health, never its secret or payloads. */
export type WebhookHealthView = {
  __typename?: 'WebhookHealthView';
  disabledAt?: Maybe<Scalars['DateTimeISO']['output']>;
  disabledReason?: Maybe<Scalars['String']['output']>;
  events: Array<Scalars['String']['output']>;
  /** Failed attempts since the last success. */
  failureStreak: Scalars['Int']['output'];
  id: Scalars['ID']['output'];
  lastAttemptAt?: Maybe<Scalars['DateTimeISO']['output']>;
  lastAttemptStatusCode?: Maybe<Scalars['Int']['output']>;
  lastAttemptSucceeded?: Maybe<Scalars['Boolean']['output']>;
  lastFailureAt?: Maybe<Scalars['DateTimeISO']['output']>;
  lastFailureError?: Maybe<Scalars['String']['output']>;
  /** active | disabled */
  status: Scalars['String']['output'];
  url: Scalars['String']['output'];
};

export type WebhookList = {
  __typename?: 'WebhookList';
  data: Array<Webhook>;
};

/** A re-send of the events of a window that a subscription missed, worked as a job. */
export type WebhookRecovery = {
  __typename?: 'WebhookRecovery';
  all: Scalars['Boolean']['output'];
  createdAt: Scalars['DateTimeISO']['output'];
  error?: Maybe<Scalars['String']['output']>;
  /** Events re-sent so far. */
  events: Scalars['Int']['output'];
  finishedAt?: Maybe<Scalars['DateTimeISO']['output']>;
  id: Scalars['ID']['output'];
  since: Scalars['DateTimeISO']['output'];
  /** running | done | failed (the subscription was disabled meanwhile). */
  status: Scalars['String']['output'];
  until: Scalars['DateTimeISO']['output'];
  webhookId: Scalars['ID']['output'];
};

/** The result of the dashboard's test event: its first attempt, made at once. */
export type WebhookTestResult = {
  __typename?: 'WebhookTestResult';
  deliveryId: Scalars['ID']['output'];
  /** The delivery after the attempt: succeeded, or pending with a retry scheduled, or failed. */
  deliveryStatus: Scalars['String']['output'];
  durationMs: Scalars['Int']['output'];
  error?: Maybe<Scalars['String']['output']>;
  eventId: Scalars['ID']['output'];
  eventType: Scalars['String']['output'];
  nextAttemptAt?: Maybe<Scalars['DateTimeISO']['output']>;
  statusCode?: Maybe<Scalars['Int']['output']>;
  success: Scalars['Boolean']['output'];
};

/** A CCD published to the external XDS repository (ITI-41): what the remote registry now holds. */
export type XdsPublication = {
  __typename?: 'XdsPublication';
  /** creationTime (HL7 DTM, UTC). */
  creationTime: Scalars['String']['output'];
  /** XDSDocumentEntry.uniqueId: the CDA document id as an OID (2.25.…). */
  documentUniqueId: Scalars['String']['output'];
  /** SHA-1 of the CCD as sent (hex). */
  hash: Scalars['String']['output'];
  patientId: Scalars['ID']['output'];
  /** The repository endpoint (XDS_REPOSITORY_URL). */
  repository: Scalars['String']['output'];
  /** Size of the CCD in bytes. */
  size: Scalars['Int']['output'];
  /** XDSSubmissionSet.uniqueId (2.25.…). */
  submissionSetUniqueId: Scalars['String']['output'];
};

export type EventsSubscriptionVariables = Exact<{
  types?: InputMaybe<Array<EventType> | EventType>;
}>;


export type EventsSubscription = { __typename?: 'Subscription', events: { __typename?: 'Event', id: string, type: EventType, timestamp: string, data: unknown } };

export type MessageStatusChangedSubscriptionVariables = Exact<{
  messageId?: InputMaybe<Scalars['ID']['input']>;
  patientId?: InputMaybe<Scalars['ID']['input']>;
}>;


export type MessageStatusChangedSubscription = { __typename?: 'Subscription', messageStatusChanged: { __typename?: 'Message', id: string, patientId: string, channel: string, status: string, error?: string | null, updatedAt: string } };

export type MessageQueryVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type MessageQuery = { __typename?: 'Query', message: { __typename?: 'Message', id: string, patientId: string, channel: string, status: string, error?: string | null, body: string, createdAt: string, updatedAt: string } };

export type MessagesQueryVariables = Exact<{
  patientId?: InputMaybe<Scalars['ID']['input']>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  offset?: InputMaybe<Scalars['Int']['input']>;
}>;


export type MessagesQuery = { __typename?: 'Query', messages: { __typename?: 'MessagePage', data: Array<{ __typename?: 'Message', id: string, patientId: string, channel: string, status: string, createdAt: string }>, pagination: { __typename?: 'Pagination', total: number, limit: number, offset: number } } };

export type SendMessageMutationVariables = Exact<{
  input: SendMessageInput;
  idempotencyKey?: InputMaybe<Scalars['String']['input']>;
}>;


export type SendMessageMutation = { __typename?: 'Mutation', sendMessage: { __typename?: 'Message', id: string, status: string, createdAt: string } };


export const EventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"Events"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"types"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"EventType"}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"events"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"types"},"value":{"kind":"Variable","name":{"kind":"Name","value":"types"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"timestamp"}},{"kind":"Field","name":{"kind":"Name","value":"data"}}]}}]}}]} as unknown as DocumentNode<EventsSubscription, EventsSubscriptionVariables>;
export const MessageStatusChangedDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"MessageStatusChanged"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"messageId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"patientId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"messageStatusChanged"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"messageId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"messageId"}}},{"kind":"Argument","name":{"kind":"Name","value":"patientId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"patientId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"patientId"}},{"kind":"Field","name":{"kind":"Name","value":"channel"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]}}]} as unknown as DocumentNode<MessageStatusChangedSubscription, MessageStatusChangedSubscriptionVariables>;
export const MessageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Message"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"message"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"patientId"}},{"kind":"Field","name":{"kind":"Name","value":"channel"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]}}]} as unknown as DocumentNode<MessageQuery, MessageQueryVariables>;
export const MessagesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Messages"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"patientId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"offset"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"messages"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"patientId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"patientId"}}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}},{"kind":"Argument","name":{"kind":"Name","value":"offset"},"value":{"kind":"Variable","name":{"kind":"Name","value":"offset"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"data"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"patientId"}},{"kind":"Field","name":{"kind":"Name","value":"channel"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pagination"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}},{"kind":"Field","name":{"kind":"Name","value":"offset"}}]}}]}}]}}]} as unknown as DocumentNode<MessagesQuery, MessagesQueryVariables>;
export const SendMessageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SendMessage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SendMessageInput"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"idempotencyKey"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sendMessage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}},{"kind":"Argument","name":{"kind":"Name","value":"idempotencyKey"},"value":{"kind":"Variable","name":{"kind":"Name","value":"idempotencyKey"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]} as unknown as DocumentNode<SendMessageMutation, SendMessageMutationVariables>;