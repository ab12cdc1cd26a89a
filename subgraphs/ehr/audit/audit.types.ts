import { GraphQLJSON } from 'graphql-scalars';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Pagination } from '../../../common/graphql/pagination';

@ObjectType({ description: 'An immutable record of one change, hash-chained per tenant.' })
export class AuditRecord {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  tenantId!: string;

  @Field(() => Int, { description: "Position in the tenant's chain, from 1." })
  seq!: number;

  @Field(() => String)
  actor!: string;

  @Field(() => String, { description: 'create | update | delete | grant | revoke | rotate-keys' })
  action!: string;

  @Field(() => String)
  entityType!: string;

  @Field(() => String)
  entityId!: string;

  @Field(() => Date)
  at!: Date;

  @Field(() => GraphQLJSON, { nullable: true, description: 'Previous value; encrypted fields (…Enc) as ciphertext.' })
  before!: unknown;

  @Field(() => GraphQLJSON, { nullable: true })
  after!: unknown;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => String)
  prevHash!: string;

  @Field(() => String)
  hash!: string;
}

@ObjectType()
export class AuditRecordPage {
  @Field(() => [AuditRecord])
  data!: AuditRecord[];

  @Field(() => Pagination)
  pagination!: Pagination;
}

@ObjectType()
export class AuditChainVerification {
  @Field(() => Boolean)
  valid!: boolean;

  @Field(() => Int, { description: 'Records checked before the first problem (all when valid).' })
  checked!: number;

  @Field(() => Int, { nullable: true })
  brokenAtSeq!: number | null;

  @Field(() => ID, { nullable: true })
  brokenRecordId!: string | null;

  @Field(() => String, { nullable: true })
  problem!: string | null;
}

@ObjectType({ description: 'One read of patient data (NEN 7513 access logging).' })
export class AccessLogEntry {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  actor!: string;

  @Field(() => [String])
  roles!: string[];

  @Field(() => String, { description: 'read | list' })
  action!: string;

  @Field(() => String)
  entityType!: string;

  @Field(() => String)
  entityId!: string;

  @Field(() => ID)
  patientId!: string;

  @Field(() => Date)
  at!: Date;

  @Field(() => String, { nullable: true })
  requestId!: string | null;

  @Field(() => String, { nullable: true, description: 'The purpose of use declared for the read (HL7 v3 PurposeOfUse code, e.g. TREAT).' })
  purpose!: string | null;

  @Field(() => String, { nullable: true, description: "AI agents: the token's OAuth client." })
  client!: string | null;

  @Field(() => String, { nullable: true, description: 'AI agents: the MCP tool that read the data.' })
  tool!: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'NEN 7513: the person answerable for the read (the actor, or whom an agent or integration acts for); null in entries written before it was kept.',
  })
  responsibleUser!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'NEN 7513: the kind of data read (demographics, encounter, observation, order, document, clinical, ehr, directory); null in older entries.',
  })
  dataCategory!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'NEN 7513: the grounds the access was granted on (treatment, consent:<purpose>, own-record, subject-access, service); null in older entries.',
  })
  grounds!: string | null;
}

@ObjectType()
export class AccessLogPage {
  @Field(() => [AccessLogEntry])
  data!: AccessLogEntry[];

  @Field(() => Pagination)
  pagination!: Pagination;
}

@ObjectType({ description: "A population statistic computed over the tenant's records: an AQL answer of aggregates only, over many patients." })
export class PopulationQueryEntry {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  actor!: string;

  @Field(() => [String])
  roles!: string[];

  @Field(() => Date)
  at!: Date;

  @Field(() => String, { description: 'A digest of the query and its parameters: the same statistic asked again has the same one.' })
  entityId!: string;

  @Field(() => String, { description: 'AQL' })
  language!: string;

  @Field(() => String)
  query!: string;

  @Field(() => GraphQLJSON)
  parameters!: Record<string, unknown>;

  @Field(() => Int, { description: 'Patients the statistic was computed from: at least this many where patientsExact is false.' })
  patients!: number;

  @Field(() => Boolean, {
    description: 'Whether patients is exact; false for a COUNT summed from the kept counts of values, where only a lower bound (at least 10) was checked.',
  })
  patientsExact!: boolean;

  @Field(() => Int, { description: 'Compositions the statistic was computed from.' })
  compositions!: number;

  @Field(() => String, { nullable: true })
  requestId!: string | null;

  @Field(() => String, { nullable: true, description: 'The purpose of use declared for the query (HL7 v3 PurposeOfUse code).' })
  purpose!: string | null;

  @Field(() => String, { nullable: true, description: "AI agents: the token's OAuth client." })
  client!: string | null;

  @Field(() => String, { nullable: true, description: 'AI agents: the MCP tool that ran the query.' })
  tool!: string | null;
}

@ObjectType()
export class PopulationQueryPage {
  @Field(() => [PopulationQueryEntry])
  data!: PopulationQueryEntry[];

  @Field(() => Pagination)
  pagination!: Pagination;
}
