import { Field, InputType } from 'type-graphql';

@InputType({ description: 'One FHIR search parameter as sent (name may carry a modifier, e.g. name:exact); repeats are kept.' })
export class FhirSearchParam {
  @Field(() => String)
  name!: string;

  @Field(() => String)
  value!: string;
}
