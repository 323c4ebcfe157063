/**
 * Whether the reference servers (baseline-server.ts, fastify-floor-server.ts) answer GET profile as the
 * registry does: the same status and the same JSON (members, order, values) for every path asked. Used
 * by the GET profile scenario before it measures anything, and by bench/test/reference-servers.test.ts.
 */

export interface Origin {
  /** Named in the error, e.g. "baseline (node:http)". */
  name: string;
  /** http://127.0.0.1:<port> */
  base: string;
}

interface Answer {
  status: number;
  /** The body as parsed JSON, or its text when it is not JSON. */
  body: unknown;
}

async function answer(origin: Origin, path: string): Promise<Answer> {
  const response = await fetch(`${origin.base}${path}`);
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: response.status, body: text };
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Where two JSON values first differ, as a member path (`provenance`, `endpoints[2].url`), with what
 * each holds there; undefined when they are the same, member order included.
 */
export function firstDifference(
  expected: unknown,
  actual: unknown,
  at = '',
): { at: string; expected: unknown; actual: unknown } | undefined {
  const here = { at: at === '' ? '(the whole body)' : at, expected, actual };
  if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      const found = firstDifference(expected[i], actual[i], `${at}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (isObject(expected) && isObject(actual)) {
    const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])];
    for (const key of keys) {
      const found = firstDifference(expected[key], actual[key], at === '' ? key : `${at}.${key}`);
      if (found !== undefined) return found;
    }
    // The same members with the same values, in another order.
    const expectedOrder = Object.keys(expected).join(',');
    const actualOrder = Object.keys(actual).join(',');
    if (expectedOrder !== actualOrder)
      return { at: `${here.at} (member order)`, expected: expectedOrder, actual: actualOrder };
    return undefined;
  }
  return Object.is(expected, actual) ? undefined : here;
}

/**
 * Asks `registry` and every one of `references` for each of `paths` and throws, naming the path, the
 * server and the first member that differs, unless all answer 200 with the same JSON. Returns how
 * many paths were compared.
 */
export async function assertSameProfiles(
  registry: Origin,
  references: readonly Origin[],
  paths: readonly string[],
): Promise<number> {
  for (const path of paths) {
    const expected = await answer(registry, path);
    if (expected.status !== 200) {
      throw new Error(
        `${registry.name} answered ${expected.status} to GET ${path}: ${JSON.stringify(expected.body)}`,
      );
    }
    for (const reference of references) {
      const actual = await answer(reference, path);
      const difference =
        actual.status === 200
          ? firstDifference(expected.body, actual.body)
          : { at: 'status', expected: 200, actual: actual.status };
      if (difference !== undefined) {
        throw new Error(
          `the reference servers' JSON differs from the registry's: GET ${path}, at ${difference.at}, ` +
            `${registry.name} has ${JSON.stringify(difference.expected)}, ${reference.name} has ${JSON.stringify(difference.actual)}`,
        );
      }
    }
  }
  return paths.length;
}
