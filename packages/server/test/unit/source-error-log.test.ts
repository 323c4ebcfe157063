import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  reportingSourceErrors,
  type SourceErrorReport,
} from '../../src/modules/federation/source-error-log.js';

test("each source's new error is reported once after its round, and again only when it changes", async () => {
  const stored = new Map<string, { id: string; state: string; last_error: string | null }>();
  const reports: SourceErrorReport[] = [];
  let failing = true;
  const [refresher] = reportingSourceErrors(
    [
      {
        refreshAll: async () => {
          stored.set('a2a:x', {
            id: 'a2a:x',
            state: failing ? 'error' : 'ok',
            last_error: failing ? 'x answered 503' : null,
          });
          if (failing) throw new Error('unexpected');
        },
      },
    ],
    async () => [...stored.values()],
    (source) => reports.push(source),
  );
  await assert.rejects(refresher!.refreshAll(), /unexpected/);
  await assert.rejects(refresher!.refreshAll(), /unexpected/);
  assert.deepEqual(reports, [{ id: 'a2a:x', state: 'error', last_error: 'x answered 503' }]);
  failing = false;
  await refresher!.refreshAll();
  failing = true;
  await assert.rejects(refresher!.refreshAll(), /unexpected/);
  assert.equal(reports.length, 2, 'reported again after the error cleared and came back');
});
