import { randomUUID } from 'node:crypto';
import { execute, GraphQLError, Kind, type ExecutionArgs, type ExecutionResult, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import type { ApolloServer } from '@apollo/server';
import type { EventBus } from '../../common/events/bus';
import { eventTypeToEnum, type MessageEventData, type PlatformEvent } from '../../common/events/types';
import type { Logger } from '../../common/logger';
import type { GatewayContext } from '../context';
import { canSeeEvent } from '../../subgraphs/messaging/public';
import type { SubscriptionPlan } from './plan';
import { graphQLError } from './plan';
import { BoundedQueue } from './queue';
import type { Session } from './session';

/** Undelivered events one subscription may hold before it is ended (docs/subscriptions.md). */
const SUBSCRIPTION_QUEUE_LIMIT = 100;

const overflow = () =>
  graphQLError(
    'RATE_LIMIT_EXCEEDED',
    `Subscription ended: more than ${SUBSCRIPTION_QUEUE_LIMIT} events were waiting for this client. Subscribe again and catch up with a query.`,
  );

/** The `events` field: the caller's visible events of the requested types, as webhooks see them. */
function eventStream(bus: EventBus, session: Session, plan: Extract<SubscriptionPlan, { field: 'events' }>) {
  let unsubscribe = () => {};
  const queue = new BoundedQueue<PlatformEvent>(SUBSCRIPTION_QUEUE_LIMIT, overflow, () => unsubscribe());
  unsubscribe = bus.subscribe((event) => {
    if (!plan.types.has(event.type) || !canSeeEvent(session.identity, event)) return;
    queue.push(event);
  });
  return queue;
}

/** How many (event, document) results EventResults keeps: far more than the documents one event reaches. */
const EVENT_RESULTS_KEPT = 1000;

/**
 * The `events` results of every subscription: a document's result for an event
 * depends on nothing but the two (who may see the event is decided before), so
 * it is executed once per event and document and handed to each subscription
 * that selected the same, instead of once per subscriber.
 */
export class EventResults {
  private readonly results = new Map<string, ExecutionResult>();

  /** `documentKey` names the document, operation and variables (equal keys, equal results). */
  stream(
    args: ExecutionArgs,
    documentKey: string,
    bus: EventBus,
    session: Session,
    plan: Extract<SubscriptionPlan, { field: 'events' }>,
  ): AsyncIterableIterator<ExecutionResult> {
    const queue = eventStream(bus, session, plan);
    const resultOf = (event: PlatformEvent) => {
      const key = `${event.id}\n${documentKey}`;
      let result = this.results.get(key);
      if (!result) {
        const payload = { id: event.id, type: eventTypeToEnum(event.type), timestamp: event.timestamp, data: event.data };
        // Event's fields resolve synchronously (no resolver of theirs awaits), so execute answers at once.
        result = execute({ ...args, rootValue: payload }) as ExecutionResult;
        this.results.set(key, result);
        if (this.results.size > EVENT_RESULTS_KEPT) this.results.delete(this.results.keys().next().value!);
      }
      return result;
    };
    const stream: AsyncIterableIterator<ExecutionResult> = {
      next: async () => {
        const item = await queue.next();
        return item.done ? item : { value: resultOf(item.value), done: false };
      },
      return: () => queue.return(),
      throw: (error) => queue.throw(error),
      [Symbol.asyncIterator]: () => stream,
    };
    return stream;
  }
}

export interface MessageStatusDeps {
  bus: EventBus;
  apollo: ApolloServer<GatewayContext>;
  logger: Logger;
}

/**
 * The `messageStatusChanged` field: each matching `message.status` event is
 * answered, one at a time and in arrival order, by running the client's
 * selection through the gateway as the subscriber. `status` and `error` are
 * those of the change itself, so a fast sequence never shows a later status twice.
 */
export function messageStatusStream(
  deps: MessageStatusDeps,
  session: Session,
  plan: Extract<SubscriptionPlan, { field: 'messageStatusChanged' }>,
): AsyncIterableIterator<ExecutionResult> {
  let unsubscribe = () => {};
  const queue = new BoundedQueue<PlatformEvent<MessageEventData>>(SUBSCRIPTION_QUEUE_LIMIT, overflow, () => unsubscribe());
  unsubscribe = deps.bus.subscribe((event) => {
    if (event.type !== 'message.status' || !canSeeEvent(session.identity, event)) return;
    const data = event.data as unknown as MessageEventData;
    if (plan.messageId !== undefined && data.messageId !== plan.messageId) return;
    if (plan.patientId !== undefined && data.patientId !== plan.patientId) return;
    queue.push(event as unknown as PlatformEvent<MessageEventData>);
  });

  const resolve = async (event: PlatformEvent<MessageEventData>): Promise<ExecutionResult> => {
    const requestId = randomUUID();
    // A fresh context per change: the signed identity for subgraphs is short-lived, the subscription is not.
    const contextValue: GatewayContext = {
      principal: session.principal,
      identity: session.identity,
      requestId,
      logger: deps.logger.child({ requestId, subscription: 'messageStatusChanged' }),
    };
    const response = await deps.apollo.executeOperation<Record<string, unknown>>(
      { query: plan.query, variables: { ...plan.variables, [plan.idVariable]: event.data.messageId } },
      { contextValue },
    );
    if (response.body.kind !== 'single') return { errors: [graphQLError('INTERNAL_ERROR', 'Unexpected incremental response')] };
    const { data, errors } = response.body.singleResult;
    const message = data?.[plan.responseKey];
    if (message && typeof message === 'object') {
      overlay(plan.selectionSet, plan.fragments, message as Record<string, unknown>, { status: event.data.status, error: event.data.error ?? null });
    }
    return {
      data: (data ?? null) as ExecutionResult['data'],
      ...(errors ? { errors: errors.map((e) => new GraphQLError(e.message, { path: e.path, extensions: e.extensions })) } : {}),
    };
  };

  let closed = false;
  const stream: AsyncIterableIterator<ExecutionResult> = {
    next: async () => {
      const item = await queue.next();
      if (item.done) return { value: undefined, done: true };
      const value = await resolve(item.value);
      return closed ? { value: undefined, done: true } : { value, done: false };
    },
    return: async () => {
      closed = true;
      await queue.return();
      return { value: undefined, done: true };
    },
    throw: async (error) => {
      closed = true;
      await queue.return();
      throw error;
    },
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}

/** Writes the change's own status and error into every `status`/`error` the client selected on the message. */
function overlay(
  selectionSet: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  target: Record<string, unknown>,
  values: Record<string, unknown>,
): void {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (name in values) target[selection.alias?.value ?? name] = values[name];
    } else {
      const inner = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments[selection.name.value].selectionSet;
      overlay(inner, fragments, target, values);
    }
  }
}
