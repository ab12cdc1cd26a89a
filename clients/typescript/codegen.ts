import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed operations from the client-facing schema (schema/api.graphql: queries, mutations and
// the Subscription type the gateway serves over graphql-ws). Output is checked in; a test fails
// when it is stale: run `npm run codegen` in this folder after changing an operation or the schema.
const config: CodegenConfig = {
  schema: '../../schema/api.graphql',
  documents: ['src/operations/*.graphql'],
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { useTypeImports: true, enumsAsTypes: true, scalars: { JSON: 'unknown', JSONObject: 'Record<string, unknown>', DateTimeISO: 'string' } },
    },
  },
};
export default config;
