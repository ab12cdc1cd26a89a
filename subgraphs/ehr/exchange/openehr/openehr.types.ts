import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, ObjectType } from 'type-graphql';

@ObjectType({ description: 'One openEHR answer: its JSON body, version uid and time.' })
export class OpenEhrResult {
  @Field(() => GraphQLJSON, { nullable: true })
  body?: unknown;

  @Field(() => String, { nullable: true, description: 'Version uid of the answered resource (the EHR id for an EHR).' })
  uid?: string;

  @Field(() => Date, { nullable: true })
  lastModified?: Date;

  @Field(() => Boolean, { nullable: true, description: 'Logically deleted.' })
  deleted?: boolean;

  /** Read by ItemTagResolver's `itemTags` field only when a caller selects it. */
  itemTags?: () => Promise<{ versionedObject: unknown[]; version: unknown[] }>;
}

/** What a composition commit (create or update) carries beside the ids that name its target. */
@ArgsType()
export class CompositionCommitArgs {
  @Field(() => String, { nullable: true })
  templateId!: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The composition in `format` (JSON, FLAT, STRUCTURED); or give xml.' })
  composition!: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: 'The composition as a canonical XML document (format XML).' })
  xml!: string | null;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => String, { nullable: true, description: 'JSON (canonical, default), FLAT, STRUCTURED or XML (canonical, with xml)' })
  format!: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Commit audit: {committer, description, lifecycleState}.' })
  audit!: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Item tags set with the commit: {versionedObject, version}, each a list of {key, value?, target_path?}.',
  })
  itemTags!: Record<string, unknown> | null;
}
