import type { paths } from './generated/openapi.js';

export type { paths } from './generated/openapi.js';

type Method = 'get' | 'post' | 'put' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;

/** The JSON body an operation answers with on `status` (200 unless given), from the OpenAPI document. */
export type ResponseOf<P extends keyof paths, M extends Method, S extends number = 200> =
  Operation<P, M> extends { responses: infer R } ? (S extends keyof R ? JsonContent<R[S]> : never) : never;

/** The JSON request body of an operation, from the OpenAPI document. */
export type RequestBodyOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody?: infer B } ? JsonContent<NonNullable<B>> : never;

/** Query parameters of an operation, from the OpenAPI document. */
export type QueryOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type RegisterRequest = RequestBodyOf<'/api/agents/register', 'post'>;
export type Profile = RegisterRequest['profile'];
export type Capability = Profile['capabilities'][number];
export type Session = ResponseOf<'/api/agents/register', 'post', 201>;
export type AgentProfile = ResponseOf<'/api/agents/{did}', 'get'>;
export type UpdateProfileRequest = RequestBodyOf<'/api/agents/{did}', 'put'>;
export type DeactivateResponse = ResponseOf<'/api/agents/{did}', 'delete'>;
export type InvocationConfig = ResponseOf<'/api/agents/{did}/invocation', 'get'>;
export type UpdateInvocationConfigRequest = RequestBodyOf<'/api/agents/{did}/invocation', 'put'>;
export type UpdateInvocationConfigResponse = ResponseOf<'/api/agents/{did}/invocation', 'put'>;
export type PaymentAddress = ResponseOf<'/api/agents/{did}/payment-address', 'get'>;
export type KeyChangeResult = ResponseOf<'/api/agents/{did}/keys/rotate', 'post'>;
export type KeyRecoveryStatus = ResponseOf<'/api/agents/{did}/keys/recovery', 'get'>;
/** An agent's verified domains and handle (docs/identity.md, "Domains and handles"). */
export type AgentDomains = ResponseOf<'/api/agents/{did}/domains', 'get'>;
export type InvokeResponse = ResponseOf<'/api/invoke', 'post'>;
export type Task = ResponseOf<'/api/tasks/{id}', 'get'>;
export type PendingTasks = ResponseOf<'/api/agent/tasks', 'get'>;
export type PendingTask = PendingTasks['tasks'][number];
export type TaskAck = ResponseOf<'/api/agent/tasks/{id}/accept', 'post'>;
export type SearchQuery = QueryOf<'/api/agents/search', 'get'>;
export type SearchResponse = ResponseOf<'/api/agents/search', 'get'>;
export type SearchHit = SearchResponse['agents'][number];
/** Where an agent lives and how this registry knows it: registered here, mirrored or imported. */
export type Provenance = SearchHit['provenance'];
export type ChangePage = ResponseOf<'/api/agents/changes', 'get'>;
export type AgentChange = ChangePage['changes'][number];
export type Review = ResponseOf<'/api/reviews', 'post', 201>;
export type SubmitReviewRequest = RequestBodyOf<'/api/reviews', 'post'>;
export type EditReviewRequest = RequestBodyOf<'/api/reviews/{review_id}', 'put'>;
export type ReviewList = ResponseOf<'/api/agents/{did}/reviews', 'get'>;
export type Reputation = ResponseOf<'/api/agents/{did}/reputation', 'get'>;
export type DidDocument = ResponseOf<'/api/did/{did}', 'get'>;
export type ChainList = ResponseOf<'/api/chains', 'get'>;
export type ChainInfo = ResponseOf<'/api/chains/{chain_id}', 'get'>;
export type Stats = ResponseOf<'/api/stats', 'get'>;
export type Jwks = ResponseOf<'/.well-known/jwks.json', 'get'>;
export type Readiness = ResponseOf<'/readyz', 'get'>;
export type FederationStatus = ResponseOf<'/api/federation/status', 'get'>;
export type FederationSourceStatus = FederationStatus['sources'][number];
export type RemoteEntriesQuery = QueryOf<'/api/federation/entries', 'get'>;
export type RemoteEntriesPage = ResponseOf<'/api/federation/entries', 'get'>;
export type RemoteEntry = ResponseOf<'/api/federation/entries/{id}', 'get'>;
/** What the registry's probes found of an imported MCP server or A2A card endpoint (docs/federation.md, "Observed"). */
export type Observed = NonNullable<RemoteEntry['observed']>;
export type ObservationsQuery = QueryOf<'/api/federation/entries/{id}/observations', 'get'>;
export type ObservationsPage = ResponseOf<'/api/federation/entries/{id}/observations', 'get'>;
export type Observation = ObservationsPage['observations'][number];

/** A JSON object: the shape of invocation inputs and outputs. */
export type JsonObject = { [member: string]: unknown };
