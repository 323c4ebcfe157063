import { TaskState, type ListTasksRequest } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { TaskStatus } from '../../db/schema/index.js';
import type { TaskView } from '../../modules/tasks/schemas.js';

/** ListTasks' page size (A2A v1.0 ListTasksRequest: default 50, 1 to 100). */
export const LIST_TASKS_PAGE = { default: 50, min: 1, max: 100 } as const;

/** The registry statuses an A2A state stands for; states the broker never reaches match nothing. */
const STATUSES_OF: Partial<Record<TaskState, readonly TaskStatus[]>> = {
  [TaskState.TASK_STATE_SUBMITTED]: ['pending'],
  [TaskState.TASK_STATE_WORKING]: ['processing'],
  [TaskState.TASK_STATE_COMPLETED]: ['completed'],
  [TaskState.TASK_STATE_FAILED]: ['failed', 'timeout'],
};

/** An ISO 8601 date-time with a zone (Date.parse alone takes "-1" as a year). */
const ISO_8601_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

const invalid = (what: string): RequestMalformedError =>
  new RequestMalformedError({ message: `INVALID_PARAMS: ${what}`, metadata: { code: 'INVALID_PARAMS' } });

export interface ListFilters {
  pageSize: number;
  query: { statuses?: readonly TaskStatus[]; changedSince?: number; taskId?: string };
}

/** ListTasks' filters, each bad one refused with what to send instead. */
export function listFilters(params: ListTasksRequest): ListFilters {
  const pageSize = params.pageSize ?? LIST_TASKS_PAGE.default;
  if (!Number.isInteger(pageSize) || pageSize < LIST_TASKS_PAGE.min || pageSize > LIST_TASKS_PAGE.max) {
    throw invalid(
      `pageSize must be an integer from ${LIST_TASKS_PAGE.min} to ${LIST_TASKS_PAGE.max}; got ${params.pageSize}`,
    );
  }
  const query: ListFilters['query'] = {};
  if (params.status === TaskState.UNRECOGNIZED) {
    throw invalid('status must be a TaskState name such as TASK_STATE_COMPLETED');
  }
  if (params.status !== TaskState.TASK_STATE_UNSPECIFIED) query.statuses = STATUSES_OF[params.status] ?? [];
  if (params.statusTimestampAfter !== undefined && params.statusTimestampAfter !== '') {
    const since = ISO_8601_TIME.test(params.statusTimestampAfter)
      ? Date.parse(params.statusTimestampAfter)
      : Number.NaN;
    if (!Number.isFinite(since)) {
      throw invalid(
        `statusTimestampAfter must be an ISO 8601 time such as 2026-01-31T10:00:00Z; got ${params.statusTimestampAfter}`,
      );
    }
    query.changedSince = since;
  }
  // The registry keeps no conversation: each task is its own context, so a context is one task.
  if (params.contextId !== '') query.taskId = params.contextId;
  return { pageSize, query };
}

/** The page token: the last task's last change and id, which the next page continues after. */
export function encodeListCursor(view: TaskView): string {
  return Buffer.from(JSON.stringify([view.completed_at ?? view.created_at, view.task_id])).toString(
    'base64url',
  );
}

export function decodeListCursor(token: string): { changedAt: number; id: string } | undefined {
  if (token === '') return undefined;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (
      Array.isArray(decoded) &&
      decoded.length === 2 &&
      Number.isSafeInteger(decoded[0]) &&
      typeof decoded[1] === 'string'
    ) {
      return { changedAt: decoded[0] as number, id: decoded[1] };
    }
  } catch {
    // Falls through to the refusal below.
  }
  throw invalid('pageToken must be a nextPageToken from an earlier ListTasks answer, as it was given');
}
