/**
 * The messaging subgraph's published interface: what other layers may use of
 * it besides its GraphQL schema (schema/supergraph.graphql). The gateway serves
 * the live event stream beside the graph (GraphQL subscriptions) and decides who
 * sees which event with the messaging policy point, so those decisions stay in
 * one place. Pure functions over common types: importing this module loads no
 * resolver, database or queue (test/layers.test.ts checks it).
 */
export { can, canSeeEvent, readScope } from './policy/rules';
