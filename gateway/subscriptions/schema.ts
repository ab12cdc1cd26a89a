import { extendSchema, parse, type GraphQLSchema } from 'graphql';
import { ALERT_EVENT_TYPES, WEBHOOK_EVENT_TYPES, eventTypeToEnum, type EventType } from '../../common/events/types';

/** The event types a client can name in `events(types:)`: the webhook events and the admins' alert. */
export const SUBSCRIBABLE_EVENT_TYPES: readonly EventType[] = [...WEBHOOK_EVENT_TYPES, ...ALERT_EVENT_TYPES];

/** `MESSAGE_DELIVERED` → `message.delivered`. */
export const EVENT_TYPE_BY_ENUM = new Map<string, EventType>(SUBSCRIBABLE_EVENT_TYPES.map((type) => [eventTypeToEnum(type), type]));

const SUBSCRIPTION_SDL = `
"""A webhook event type, in upper snake case; WEBHOOK_DISABLED reaches admins only."""
enum EventType {
  ${[...EVENT_TYPE_BY_ENUM.keys()].join('\n  ')}
}

"""An event exactly as webhooks receive it: same id, type, timestamp and data."""
type Event {
  id: ID!
  type: EventType!
  """ISO 8601 UTC, as in the webhook body."""
  timestamp: String!
  data: JSON!
}

type Subscription {
  """Every webhook event of the caller's tenant (all types when \`types\` is omitted); a patient token sees its own patient's only."""
  events(types: [EventType!]): Event!
  """Each status change of the matching messages (queued, sending, sent, delivered, failed); select any Message field."""
  messageStatusChanged(messageId: ID, patientId: ID): Message!
}

extend schema {
  subscription: Subscription
}
`;

/**
 * The schema WebSocket operations are validated against: the supergraph's
 * API schema (what POST /graphql serves) plus the Subscription type, which
 * the gateway resolves itself.
 */
export function buildSubscriptionSchema(apiSchema: GraphQLSchema): GraphQLSchema {
  for (const name of ['EventType', 'Event', 'Subscription']) {
    if (apiSchema.getType(name)) throw new Error(`The supergraph already defines '${name}', which the gateway's subscriptions add`);
  }
  // JSON carries the event data as is (a scalar built from SDL serializes values unchanged).
  const sdl = (apiSchema.getType('JSON') ? '' : '"""Any JSON value."""\nscalar JSON\n') + SUBSCRIPTION_SDL;
  const schema = extendSchema(apiSchema, parse(sdl));
  // Each payload of `events` is the Event itself (messageStatusChanged has its own execution, see streams.ts).
  schema.getSubscriptionType()!.getFields().events.resolve = (event) => event;
  return schema;
}
