export { createGraphQLClient, CareGraphError, type ConnectionOptions, type GraphQLClient, type GraphQLErrorBody } from './graphql';
export { createSubscriptionClient, type SubscriptionClient, type SubscriptionOptions, type Observer } from './subscriptions';
export { createRestClient, type RestClient, type paths } from './rest';
export * from './gql/graphql';
