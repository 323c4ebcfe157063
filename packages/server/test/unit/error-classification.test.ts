import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyError } from '../../src/faces/errors.js';
import { DatabaseUnavailableError, TooManyRequestsError, shuttingDown } from '../../src/kernel/errors.js';

const origin = { requestId: 'req-1' };

describe('classifyError: one reading of an error for REST, MCP, A2A and the pages', () => {
  test('a typed error keeps its status, code, details, headers and extra members', () => {
    const classified = classifyError(shuttingDown('retry elsewhere', { task_id: 't-1' }), origin);
    assert.equal(classified.kind, 'typed');
    assert.deepEqual(
      [classified.status, classified.code, classified.title, classified.details],
      [503, 'SHUTTING_DOWN', 'Service unavailable', 'retry elsewhere'],
    );
    assert.deepEqual(classified.headers, { 'retry-after': '1' });
    assert.deepEqual(classified.extra, { task_id: 't-1' });
    const limited = classifyError(new TooManyRequestsError('TOO_MANY_POLLS', 'wait', 3), origin);
    assert.deepEqual(limited.headers, { 'retry-after': '3' });
  });

  test('a lost database is 503 DATABASE_UNAVAILABLE with Retry-After, typed or straight from a driver', () => {
    const driver = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (const [error, logged] of [
      [new DatabaseUnavailableError(driver), driver],
      [driver, driver],
    ] as const) {
      const classified = classifyError(error, origin);
      assert.equal(classified.kind, 'unavailable');
      assert.deepEqual(
        [classified.status, classified.code, classified.details],
        [503, 'DATABASE_UNAVAILABLE', 'The database is not reachable right now; retry shortly'],
      );
      assert.deepEqual(classified.headers, { 'retry-after': '1' });
      assert.equal(classified.logged, logged);
      assert.doesNotMatch(classified.details, /ECONNREFUSED|5432/);
    }
  });

  test('a schema validation error names the field and, for a parameter, its whole range', () => {
    const body = classifyError(
      {
        validation: [{ instancePath: '/profile/capabilities/0/type', message: 'must be string' }],
        validationContext: 'body',
      },
      origin,
    );
    assert.deepEqual(
      [body.status, body.code, body.details],
      [400, 'VALIDATION_FAILED', 'profile.capabilities[0].type must be string'],
    );
    const query = classifyError(
      {
        validation: [{ instancePath: '/limit', keyword: 'maximum', message: 'must be <= 100' }],
        validationContext: 'querystring',
      },
      { ...origin, parameterSchema: () => ({ type: 'integer', minimum: 1, maximum: 100 }) },
    );
    assert.equal(query.details, 'querystring limit must be an integer from 1 to 100');
  });

  test('a request the framework refused keeps its status; a client hanging up mid-body is not the database', () => {
    const media = classifyError(
      { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415, message: 'Unsupported Media Type' },
      { ...origin, contentType: 'text/plain' },
    );
    assert.deepEqual([media.status, media.code], [415, 'UNSUPPORTED_MEDIA_TYPE']);
    assert.match(media.details, /got "text\/plain"/);
    const reset = classifyError(
      Object.assign(new Error('aborted'), { code: 'ECONNRESET', statusCode: 400 }),
      origin,
    );
    assert.deepEqual([reset.kind, reset.status, reset.code], ['typed', 400, 'ECONNRESET']);
  });

  test('anything else is a 500 naming the request id and nothing of the error', () => {
    const classified = classifyError(new TypeError('secret at /work/src/file.ts:1:2'), origin);
    assert.equal(classified.kind, 'internal');
    assert.deepEqual(
      [classified.status, classified.code, classified.details],
      [500, 'INTERNAL_ERROR', 'The registry could not complete the request (request id req-1)'],
    );
  });
});
