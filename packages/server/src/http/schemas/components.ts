import type { TSchema } from '@sinclair/typebox';
import { AgentProfile, Capability, RegisterRequest, TokenResponse } from './agents.js';
import { ErrorResponse } from './common.js';
import { Chain, DidDocument } from './discovery.js';
import { InvokeRequest, InvokeResponse, PendingTask, TaskResponse } from './invocation.js';
import { BuildInfo, Health } from './operations.js';
import { Review, SubmitReviewRequest } from './reviews.js';
import { AgentSummary } from './search.js';
import { ServiceRecord } from './service-record.js';
import { AgentChange, PublishedProfile } from './change-feed.js';

/**
 * Schemas with an `$id`: registered once with the app and both validators, and named in the OpenAPI
 * document's components, so routes reference them (`ref(AgentProfile)`) instead of inlining copies.
 */
export const COMPONENT_SCHEMAS: TSchema[] = [
  ErrorResponse,
  Capability,
  AgentProfile,
  RegisterRequest,
  TokenResponse,
  Chain,
  DidDocument,
  InvokeRequest,
  InvokeResponse,
  TaskResponse,
  PendingTask,
  Review,
  SubmitReviewRequest,
  AgentSummary,
  BuildInfo,
  Health,
  ServiceRecord,
  PublishedProfile,
  AgentChange,
];
