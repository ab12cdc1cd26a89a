/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "subscription Events($types: [EventType!]) {\n  events(types: $types) {\n    id\n    type\n    timestamp\n    data\n  }\n}": typeof types.EventsDocument,
    "subscription MessageStatusChanged($messageId: ID, $patientId: ID) {\n  messageStatusChanged(messageId: $messageId, patientId: $patientId) {\n    id\n    patientId\n    channel\n    status\n    error\n    updatedAt\n  }\n}": typeof types.MessageStatusChangedDocument,
    "query Message($id: ID!) {\n  message(id: $id) {\n    id\n    patientId\n    channel\n    status\n    error\n    body\n    createdAt\n    updatedAt\n  }\n}": typeof types.MessageDocument,
    "query Messages($patientId: ID, $limit: Int, $offset: Int) {\n  messages(patientId: $patientId, limit: $limit, offset: $offset) {\n    data {\n      id\n      patientId\n      channel\n      status\n      createdAt\n    }\n    pagination {\n      total\n      limit\n      offset\n    }\n  }\n}": typeof types.MessagesDocument,
    "mutation SendMessage($input: SendMessageInput!, $idempotencyKey: String) {\n  sendMessage(input: $input, idempotencyKey: $idempotencyKey) {\n    id\n    status\n    createdAt\n  }\n}": typeof types.SendMessageDocument,
};
const documents: Documents = {
    "subscription Events($types: [EventType!]) {\n  events(types: $types) {\n    id\n    type\n    timestamp\n    data\n  }\n}": types.EventsDocument,
    "subscription MessageStatusChanged($messageId: ID, $patientId: ID) {\n  messageStatusChanged(messageId: $messageId, patientId: $patientId) {\n    id\n    patientId\n    channel\n    status\n    error\n    updatedAt\n  }\n}": types.MessageStatusChangedDocument,
    "query Message($id: ID!) {\n  message(id: $id) {\n    id\n    patientId\n    channel\n    status\n    error\n    body\n    createdAt\n    updatedAt\n  }\n}": types.MessageDocument,
    "query Messages($patientId: ID, $limit: Int, $offset: Int) {\n  messages(patientId: $patientId, limit: $limit, offset: $offset) {\n    data {\n      id\n      patientId\n      channel\n      status\n      createdAt\n    }\n    pagination {\n      total\n      limit\n      offset\n    }\n  }\n}": types.MessagesDocument,
    "mutation SendMessage($input: SendMessageInput!, $idempotencyKey: String) {\n  sendMessage(input: $input, idempotencyKey: $idempotencyKey) {\n    id\n    status\n    createdAt\n  }\n}": types.SendMessageDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription Events($types: [EventType!]) {\n  events(types: $types) {\n    id\n    type\n    timestamp\n    data\n  }\n}"): (typeof documents)["subscription Events($types: [EventType!]) {\n  events(types: $types) {\n    id\n    type\n    timestamp\n    data\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription MessageStatusChanged($messageId: ID, $patientId: ID) {\n  messageStatusChanged(messageId: $messageId, patientId: $patientId) {\n    id\n    patientId\n    channel\n    status\n    error\n    updatedAt\n  }\n}"): (typeof documents)["subscription MessageStatusChanged($messageId: ID, $patientId: ID) {\n  messageStatusChanged(messageId: $messageId, patientId: $patientId) {\n    id\n    patientId\n    channel\n    status\n    error\n    updatedAt\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Message($id: ID!) {\n  message(id: $id) {\n    id\n    patientId\n    channel\n    status\n    error\n    body\n    createdAt\n    updatedAt\n  }\n}"): (typeof documents)["query Message($id: ID!) {\n  message(id: $id) {\n    id\n    patientId\n    channel\n    status\n    error\n    body\n    createdAt\n    updatedAt\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Messages($patientId: ID, $limit: Int, $offset: Int) {\n  messages(patientId: $patientId, limit: $limit, offset: $offset) {\n    data {\n      id\n      patientId\n      channel\n      status\n      createdAt\n    }\n    pagination {\n      total\n      limit\n      offset\n    }\n  }\n}"): (typeof documents)["query Messages($patientId: ID, $limit: Int, $offset: Int) {\n  messages(patientId: $patientId, limit: $limit, offset: $offset) {\n    data {\n      id\n      patientId\n      channel\n      status\n      createdAt\n    }\n    pagination {\n      total\n      limit\n      offset\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation SendMessage($input: SendMessageInput!, $idempotencyKey: String) {\n  sendMessage(input: $input, idempotencyKey: $idempotencyKey) {\n    id\n    status\n    createdAt\n  }\n}"): (typeof documents)["mutation SendMessage($input: SendMessageInput!, $idempotencyKey: String) {\n  sendMessage(input: $input, idempotencyKey: $idempotencyKey) {\n    id\n    status\n    createdAt\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;