import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RegistryError } from '@agent-registry/sdk';
import { describeFailure } from '../src/failure.js';

const refusal = (status: number, code: string, details: string) =>
  new RegistryError({ status, code, error: 'Refused', details });

describe('registry messages in the CLI’s words', () => {
  it('routes the registry names become the commands that do the same', () => {
    const cases: [RegistryError, RegExp][] = [
      [
        refusal(401, 'TOKEN_EXPIRED', 'The token has expired; get a new one at POST /api/auth/token'),
        /get a new one at `agent-registry login`/,
      ],
      [
        refusal(
          409,
          'REVIEW_EXISTS',
          'You have already reviewed x; edit that review with PUT /api/reviews/{review_id} within 10 minutes',
        ),
        /edit that review with `agent-registry review <did> --rating <rating> --edit`/,
      ],
      [
        refusal(
          503,
          'SHUTTING_DOWN',
          'The registry is shutting down; read the task later at GET /api/tasks/{id}',
        ),
        /read the task later at `agent-registry tasks get <task-id>`/,
      ],
    ];
    for (const [error, expected] of cases) {
      const failure = describeFailure(error);
      assert.match(failure.message, expected);
      assert.doesNotMatch(failure.message, /\/api\//);
      // Scripts still get the registry's own words and code.
      assert.equal(failure.body.details, error.details);
      assert.equal(failure.body.code, error.code);
    }
  });
});
