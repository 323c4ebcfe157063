/**
 * What a new bitmap object costs the garbage collector, with no index at all: a loop makes a page's
 * worth of JSON garbage per step and, with `--bitmaps N`, N small roaring bitmaps (freed at once, as
 * a search freed its own), then prints the median young-generation pause and how much of it was
 * spent finalizing weak handles (V8's `heap.external_weak_global_handles`).
 *   node --import tsx bench/probes/bitmap-finalizers.ts [--bitmaps 5] [--steps 200000]
 * Runs itself under `--trace-gc-nvp` in a child process and reads that trace.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import roaring from 'roaring';
import { scriptArgs } from './script-args.js';

const args = scriptArgs(process.argv.slice(2));
const bitmaps = args.number('--bitmaps', 5);
const steps = args.number('--steps', 200_000);

if (process.env.BITMAP_FINALIZERS_CHILD === undefined) {
  const child = spawnSync(
    process.execPath,
    ['--trace-gc-nvp', '--import', 'tsx', fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { env: { ...process.env, BITMAP_FINALIZERS_CHILD: '1' }, encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  const scavenges = child.stdout
    .split('\n')
    .filter((line) => line.includes(' gc=s '))
    .map((line) => new Map(line.split(' ').map((pair) => pair.split('=') as [string, string])));
  const median = (key: string) => {
    const values = scavenges.map((fields) => Number(fields.get(key))).sort((a, b) => a - b);
    return values[values.length >> 1] ?? Number.NaN;
  };
  console.log(
    `${bitmaps} bitmaps per step, ${steps} steps: ${scavenges.length} scavenges, median pause ${median('pause').toFixed(2)} ms, of which finalizing weak handles ${median('heap.external_weak_global_handles').toFixed(2)} ms`,
  );
} else {
  const { RoaringBitmap32 } = roaring;
  let page = '';
  for (let step = 0; step < steps; step += 1) {
    const rows = Array.from({ length: 20 }, (_, row) => ({ did: `did:x:${step}:${row}`, tags: ['a', 'b'] }));
    page = JSON.stringify(rows);
    for (let made = 0; made < bitmaps; made += 1) new RoaringBitmap32([1, 2, step]).dispose();
  }
  if (page.length === 0) throw new Error('unreachable');
}
