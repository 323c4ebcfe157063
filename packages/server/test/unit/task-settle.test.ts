import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TaskStatus } from '../../src/db/schema/index.js';
import type { TaskRow } from '../../src/modules/tasks/tasks-store.js';
import { settle } from '../../src/modules/tasks/task-state.js';

const CREATED = 1_700_000_000_000;
const DEADLINE = CREATED + 1000;

function taskIn(status: TaskStatus, completedAt: number | null = null): TaskRow {
  return {
    id: 'task-1',
    caller_did: 'did:web:example.org:agent:caller',
    target_did: 'did:web:example.org:agent:target',
    capability: 'echo',
    input: '{}',
    status,
    delivery_mode: 'queue',
    output: null,
    error: null,
    error_code: null,
    created_at: CREATED,
    deadline_at: DEADLINE,
    accepted_at: null,
    completed_at: completedAt,
    input_bytes: 2,
    lease_until: null,
    payload_purged_at: null,
  };
}

describe('settle: the deadline rule every reader of a task applies', () => {
  for (const status of ['pending', 'processing'] as const) {
    test(`a ${status} task reads as itself before its deadline`, () => {
      const task = taskIn(status);
      assert.equal(settle(task, DEADLINE - 1), task);
    });

    test(`a ${status} task at or past its deadline reads as a timeout that ended then`, () => {
      for (const now of [DEADLINE, DEADLINE + 5000]) {
        assert.deepEqual(settle(taskIn(status), now), {
          ...taskIn(status),
          status: 'timeout',
          completed_at: now,
        });
      }
    });
  }

  for (const status of ['completed', 'failed', 'timeout'] as const) {
    test(`a ${status} task keeps its outcome past its deadline`, () => {
      const task = taskIn(status, DEADLINE - 10);
      assert.equal(settle(task, DEADLINE + 5000), task);
    });
  }

  test('settle leaves the row it was given unchanged', () => {
    const task = taskIn('pending');
    settle(task, DEADLINE + 1);
    assert.deepEqual(task, taskIn('pending'));
  });
});
