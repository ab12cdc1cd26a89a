// graphql-ws 6 publishes its `ws` adapter only through package `exports`, which this
// project's `node10` module resolution does not read; Node itself resolves it at run time.
declare module 'graphql-ws/use/ws' {
  export { useServer, type Extra } from 'graphql-ws/dist/use/ws';
}
