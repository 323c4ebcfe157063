import fs from 'node:fs';

export interface RunningBuild {
  name: string;
  version: string;
  /** Git commit the build was made from ("-dirty" when the tree had uncommitted changes); null from source. */
  commit: string | null;
  /** When `npm run build` wrote dist/, ISO 8601; null when running from source (tsx). */
  built_at: string | null;
  node: string;
}

function readJson(url: URL): Record<string, unknown> | undefined {
  try {
    return JSON.parse(fs.readFileSync(url, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** Read once at start: package.json beside src/ and dist/, and dist/build-info.json written by the build. */
export function readBuildInfo(): RunningBuild {
  const pkg = readJson(new URL('../../package.json', import.meta.url)) ?? {};
  const build = readJson(new URL('../build-info.json', import.meta.url)) ?? {};
  return {
    name: 'agent-registry',
    version: text(pkg.version) ?? '0.0.0',
    commit: text(build.commit),
    built_at: text(build.built_at),
    node: process.version,
  };
}
