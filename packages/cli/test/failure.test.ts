import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { InvocationTimeoutError, RegistryError } from '@agent-registry/sdk';
import { describeFailure } from '../src/failure.js';
import { runCli, tempHome } from './harness.js';

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

describe('an invocation refused because the agent is offline', () => {
  const details =
    'The agent is offline: no worker of it has polled for tasks since 2026-01-01T00:00:00.000Z (409 s ago, ' +
    "longer than this call's timeout of 30000 ms), so the task was not sent and will not be answered (it is " +
    'recorded as a timeout). An agent online now with the same capability: ' +
    'GET /api/agents/search?capability=text.echo%2Fv1&available=true (MCP: search_agents with capability ' +
    '"text.echo/v1" and available true)';
  const body = {
    error: 'Invocation timed out',
    code: 'INVOCATION_TIMEOUT',
    details,
    task_id: 't1',
    offline_since: '2026-01-01T00:00:00.000Z',
  };

  it('names the search command for an online agent, and does not say the agent may still answer', () => {
    const failure = describeFailure(
      new InvocationTimeoutError({
        status: 504,
        code: 'INVOCATION_TIMEOUT',
        error: body.error,
        details,
        body,
      }),
    );
    assert.match(failure.message, /`agent-registry search --capability text\.echo\/v1 --available`/);
    assert.doesNotMatch(failure.message, /may still answer|\/api\//);
    assert.match(failure.message, /hint: the agent is offline and the task was never sent/);
    assert.equal(failure.body.offline_since, '2026-01-01T00:00:00.000Z');
  });

  it('a task that was sent and timed out keeps the hint that the agent may still answer', () => {
    const sent = { ...body, details: 'The agent did not answer before the deadline (30000 ms)' };
    delete (sent as Partial<typeof body>).offline_since;
    const failure = describeFailure(
      new InvocationTimeoutError({
        status: 504,
        code: 'INVOCATION_TIMEOUT',
        error: sent.error,
        details: sent.details,
        body: sent,
      }),
    );
    assert.match(failure.message, /may still answer: `agent-registry tasks get t1`/);
    assert.equal('offline_since' in failure.body, false);
  });
});

describe('a malformed --verifier-key is a usage error', () => {
  it('verify exits 2 naming the expected format, before asking the registry anything', async () => {
    const home = tempHome();
    try {
      for (const key of ['nonsense', 'registry.example/log+1a2b3c4d+AAAA', 'a+b+!!notbase64']) {
        const result = await runCli(
          [
            'verify',
            'did:web:127.0.0.1:agent:00000000000000000000000000000000',
            '--verifier-key',
            key,
            '--json',
          ],
          // Nothing listens there: a command that got past its arguments would exit 3.
          { home, env: { AGENT_REGISTRY_URL: 'http://127.0.0.1:9' } },
        );
        assert.equal(result.code, 2, `${key}: ${result.stdout}${result.stderr}`);
        const error = (JSON.parse(result.stdout) as { error: { code: string; message: string } }).error;
        assert.equal(error.code, 'INVALID_OPTION');
        assert.match(error.message, /^--verifier-key: .*expected <name>\+<8 hex key ID>\+<base64 of 0x01/);
      }
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
