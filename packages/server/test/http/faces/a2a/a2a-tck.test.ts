import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { startKitTarget, type KitTarget } from '../../../support/a2a-kit.js';

/** A checkout of a2aproject/a2a-tck (docs/a2a.md names the commit the results are for). */
const KIT = process.env.A2A_TCK_DIR;
/** The Python that has the kit's dependencies (default: python3 on the PATH). */
const PYTHON = process.env.A2A_TCK_PYTHON ?? 'python3';

/**
 * The mandatory tests that fail by the kit's reading where the A2A v1.0 specification reads otherwise
 * (docs/a2a.md, "The A2A compatibility kit"); any other failure fails this test.
 */
const SPECIFICATION_CONFLICTS = new Set([
  // Section 3.2.2: without returnImmediately, SendMessage waits for the end; the fixture awaits WORKING.
  ...[
    'TestBasicListing::test_list_all_tasks',
    'TestBasicListing::test_list_tasks_validates_required_fields',
    'TestBasicListing::test_list_tasks_sorted_by_timestamp_descending',
    'TestFiltering::test_filter_by_context_id',
    'TestFiltering::test_filter_by_status',
    'TestFiltering::test_filter_by_last_updated_after',
    'TestFiltering::test_combined_filters',
    'TestPagination::test_custom_page_size',
    'TestPagination::test_page_token_navigation',
    'TestPagination::test_last_page_detection',
    'TestPagination::test_total_size_accuracy',
    'TestHistoryLimiting::test_history_length_zero',
    'TestHistoryLimiting::test_history_length_custom',
    'TestHistoryLimiting::test_history_length_exceeds_actual',
    'TestArtifactInclusion::test_artifacts_excluded_by_default',
    'TestArtifactInclusion::test_artifacts_included_when_requested',
    'TestEdgeCasesAndErrors::test_default_page_size_is_50',
  ].map((name) => `tests/mandatory/protocol/test_tasks_list_method.py::${name}`),
  // Section 3.1.1: a task in a terminal state takes no further message.
  'tests/mandatory/protocol/test_message_send_method.py::test_message_send_continue_task',
  'tests/mandatory/protocol/test_state_transitions.py::test_task_history_length',
  // Section 3.1.5: a completed task is not cancelable.
  'tests/mandatory/protocol/test_tasks_cancel_method.py::test_tasks_cancel_valid',
  'tests/mandatory/protocol/test_a2a_v030_new_methods.py::TestMethodMappingCompliance::test_core_method_mapping_compliance',
  // The kit's own TypeError before any request.
  'tests/mandatory/jsonrpc/test_a2a_error_codes_enhanced.py::test_push_notification_not_supported_error_32003_enhanced',
  // A word match on "token" (the security scheme) and the loopback PUBLIC_URL of a local run.
  'tests/mandatory/security/test_agent_card_security.py::test_sensitive_information_protection',
]);

describe('A2A face: the A2A compatibility kit (a2aproject/a2a-tck), mandatory category', () => {
  let target: KitTarget | undefined;
  before(async () => {
    if (KIT !== undefined) target = await startKitTarget();
  });
  after(() => target?.close());

  test(
    'no mandatory failure other than the documented specification conflicts',
    { skip: KIT === undefined ? 'set A2A_TCK_DIR to a checkout of a2aproject/a2a-tck' : false },
    async () => {
      const kit = target as KitTarget;
      const env = {
        ...process.env,
        SUT_URL: kit.root,
        A2A_AUTH_HEADERS: JSON.stringify({
          Authorization: `Bearer ${kit.caller.token}`,
          'A2A-Version': '1.0',
        }),
      };
      const args = [
        '-m',
        'pytest',
        'tests/mandatory/',
        '-m',
        'mandatory or mandatory_protocol or mandatory_jsonrpc',
      ];
      const output = await new Promise<string>((resolve) => {
        execFile(
          PYTHON,
          [...args, '-q', '-rfE', '-p', 'no:cacheprovider', '--sut-url', kit.root],
          { cwd: KIT, env, maxBuffer: 64 * 1024 * 1024 },
          // pytest exits non-zero when any test fails; the summary says which.
          (_error, stdout, stderr) => resolve(`${stdout}\n${stderr}`),
        );
      });
      // The summary's lines name a test (`FAILED tests/...::name - reason`); captured log lines do not.
      const summary = output.split('\n').filter((line) => /^(FAILED|ERROR) tests\//.test(line));
      const unexpected = summary
        .map((line) => line.split(' ')[1] ?? '')
        .filter((name) => !SPECIFICATION_CONFLICTS.has(name));
      assert.match(output, /\d+ passed/, output.slice(-4000));
      assert.deepEqual(unexpected, [], summary.join('\n'));
    },
  );
});
