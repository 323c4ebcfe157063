/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time, and
 * the most inclusive time, so a benchmark that falls short points at its cost.
 *   npx tsx bench/profile-summary.ts <file.cpuprofile> [top=25]
 */
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export function summariseProfile(file: string, top = 25): string {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  const label = (node: ProfileNode): string => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url
      .replace(/^file:\/\//, '')
      .replace(/^.*node_modules\//, '~/')
      .replace(/^.*\/packages\//, '');
    return `${functionName || '(anonymous)'} ${where}${where ? `:${lineNumber + 1}` : ''}`;
  };
  const packageOf = (node: ProfileNode): string => {
    const { url, functionName } = node.callFrame;
    if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    if (pkg !== undefined) return pkg;
    if (url.startsWith('node:')) return 'node:' + (url.slice(5).split('/')[1] ?? url.slice(5));
    if (url.includes('/packages/server/'))
      return 'server:' + (url.split('/packages/server/')[1]?.split('/').slice(1, 2).join('/') ?? '');
    return url.replace(/^.*\//, '');
  };
  const byPackage = new Map<string, number>();
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let all = 0;
  for (const [id, us] of selfUs) {
    all += us;
    const node = byId.get(id) as ProfileNode;
    self.set(label(node), (self.get(label(node)) ?? 0) + us);
    byPackage.set(packageOf(node), (byPackage.get(packageOf(node)) ?? 0) + us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const key = label(byId.get(at) as ProfileNode);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + us);
    }
  }
  const rows = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([key, us]) =>
          `${((us / all) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`,
      )
      .join('\n');
  return `${file}: ${(all / 1000).toFixed(0)} ms sampled\n-- self time by package --\n${rows(byPackage)}\n-- self --\n${rows(self)}\n-- inclusive --\n${rows(total)}`;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop() as string)) {
  const [file, top] = process.argv.slice(2);
  if (file === undefined) {
    console.error('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(summariseProfile(file, Number(top ?? 25)));
}
