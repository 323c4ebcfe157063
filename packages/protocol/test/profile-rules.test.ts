import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkProfile, PROFILE_LIMITS } from '../src/profile-rules.js';

const paths = (profile: unknown, mode: 'register' | 'update' = 'register') =>
  checkProfile(profile, mode).problems.map((problem) => `${problem.path} ${problem.code}`);

describe('checkProfile', () => {
  it('accepts a minimal and a complete profile', () => {
    assert.deepEqual(paths({ name: 'A', capabilities: [{ type: 'echo' }] }), []);
    const full = {
      name: 'n'.repeat(PROFILE_LIMITS.nameMaxLength),
      description: 'd'.repeat(PROFILE_LIMITS.descriptionMaxLength),
      capabilities: [
        {
          type: 'translation',
          description: null,
          tags: Array.from({ length: 20 }, () => 't'.repeat(50)),
          input_schema: { type: 'object' },
          output_schema: null,
        },
      ],
      tags: ['a'],
      avatar: 'https://example.com/a.png',
      website: '',
    };
    assert.deepEqual(checkProfile(full), { problems: [], warnings: [] });
  });

  it('counts characters as code points, like the registry', () => {
    assert.deepEqual(paths({ name: '😀'.repeat(100), capabilities: [{ type: 'x' }] }), []);
    assert.deepEqual(paths({ name: '😀'.repeat(101), capabilities: [{ type: 'x' }] }), ['$.name TOO_LONG']);
  });

  it('reports every problem with its path', () => {
    assert.deepEqual(
      paths({
        name: 5,
        capabilities: [null, { type: '' }, { type: 'x', tags: 'a', input_schema: [] }],
        tags: [1],
        avatar: 'javascript:alert(1)',
        website: 'https://' + 'a'.repeat(2048),
      }),
      [
        '$.name WRONG_TYPE',
        '$.capabilities[0] WRONG_TYPE',
        '$.capabilities[1].type TOO_SHORT',
        '$.capabilities[2].tags WRONG_TYPE',
        '$.capabilities[2].input_schema WRONG_TYPE',
        '$.tags[0] WRONG_TYPE',
        '$.avatar INVALID_URL',
        '$.website TOO_LONG',
      ],
    );
    assert.deepEqual(paths({ name: 'a', capabilities: Array.from({ length: 51 }, () => ({ type: 'x' })) }), [
      '$.capabilities TOO_MANY',
    ]);
  });

  it('warns about unknown members with a quoted path when needed', () => {
    const { problems, warnings } = checkProfile({
      name: 'a',
      capabilities: [{ type: 'x', 'in put': 1 }],
      extra: 1,
    });
    assert.deepEqual(problems, []);
    assert.deepEqual(
      warnings.map((warning) => warning.path),
      ['$.capabilities[0]["in put"]', '$.extra'],
    );
  });

  it('update mode requires nothing but checks what is present', () => {
    assert.deepEqual(paths({}, 'update'), []);
    assert.deepEqual(paths({ name: null, capabilities: null }, 'update'), []);
    assert.deepEqual(paths({ name: '', capabilities: [] }, 'update'), [
      '$.name TOO_SHORT',
      '$.capabilities TOO_FEW',
    ]);
  });
});
