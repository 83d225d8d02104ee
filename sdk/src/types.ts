// Types of the API's operations, read from the generated document (openapi.ts): what each takes and answers, the
// union of its error codes, and the webhook events.
import type { operations, webhooks } from './openapi.js';

export type OperationId = keyof operations;
type Operation<O extends OperationId> = operations[O];
type Json<R> = R extends { content: { 'application/json': infer J } } ? J : never;
type Responses<O extends OperationId> = Operation<O>['responses'];
type SuccessJson<O extends OperationId> = Json<Responses<O>[Extract<keyof Responses<O>, 200 | 201 | 202>]>;

/** What an operation answers inside `{ success, data }` (or its whole JSON when it has no envelope). */
export type DataOf<O extends OperationId> = SuccessJson<O> extends { data: infer D } ? D : SuccessJson<O>;
/** The JSON body an operation takes. */
export type BodyOf<O extends OperationId> =
  Operation<O> extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;
/** The query an operation takes. */
export type QueryOf<O extends OperationId> =
  Operation<O> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

type AnyResponse = { [O in OperationId]: Responses<O>[keyof Responses<O>] }[OperationId];
type ErrorCodeOf<J> = J extends { success: false; error: { code: infer C } } ? C : never;
/** Every error code the API can answer with. */
export type ErrorCode = ErrorCodeOf<Json<AnyResponse>>;

type EventOf<K extends keyof webhooks> = webhooks[K] extends { post: infer P }
  ? P extends { requestBody?: infer B }
    ? Json<NonNullable<B>>
    : never
  : never;
/** A webhook event postcode sends, by its `type`. */
export type WebhookEvent = { [K in keyof webhooks]: EventOf<K> }[keyof webhooks];
export type WebhookEventType = keyof webhooks;
