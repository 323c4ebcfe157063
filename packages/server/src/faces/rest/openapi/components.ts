import type { TSchema } from '@sinclair/typebox';
import {
  AgentProfile,
  Capability,
  PublishedProfile,
  RegisterRequest,
  TokenResponse,
} from '../../../modules/agents/schemas.js';
import { ErrorResponse } from '../../../http/common-schemas.js';
import { Chain } from '../../../modules/agents/did-schemas.js';
import { DidDocument } from '../../../modules/identity/schemas.js';
import { InvokeRequest, InvokeResponse, PendingTask, TaskResponse } from '../../../modules/tasks/schemas.js';
import { BuildInfo, Health } from '../../../modules/operations/schemas.js';
import { Review, SubmitReviewRequest } from '../../../modules/reviews/schemas.js';
import { AgentSummary } from '../../../modules/search/search-schemas.js';
import { ServiceRecord } from '../../../modules/service-record/schemas.js';
import { Availability } from '../../../modules/availability/schemas.js';
import { AgentChange } from '../../../modules/agents/change-feed-schemas.js';
import { LogProof } from '../../../modules/transparency-log/schemas.js';
import { Provenance } from '../../../modules/agents/provenance-schemas.js';
import { RemoteEntry } from '../../../modules/federation/schemas.js';
import { Observed } from '../../../modules/search/observed-schema.js';
import { HomeReport } from '../../../modules/search/home-report-schema.js';

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
  Availability,
  PublishedProfile,
  AgentChange,
  LogProof,
  Provenance,
  RemoteEntry,
  Observed,
  HomeReport,
];
