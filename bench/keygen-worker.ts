/**
 * Child process: signs a share of the registration bodies, so both cores generate them before a run.
 * The bodies (tens of MB) go through a file: one IPC message that large once stalled a run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { registrationBodies } from './keys.js';

const [keyType, count, timestamp, seed] = process.argv.slice(2);
if (keyType !== 'ed25519' && keyType !== 'secp256k1')
  throw new Error('usage: keygen-worker.ts <key type> <count> <timestamp> <seed>');
const file = path.join(os.tmpdir(), `registry-bench-bodies-${process.pid}.json`);
fs.writeFileSync(
  file,
  JSON.stringify(registrationBodies(keyType, Number(count), Number(timestamp), Number(seed))),
);
process.send?.({ type: 'bodies', file }, () => process.exit(0));
