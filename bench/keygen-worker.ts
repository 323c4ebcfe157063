/**
 * Child process: signs a share of the registration bodies into a JSON file, so both cores generate
 * them before a run. No IPC channel: the runner waits for the exit and reads the file.
 *
 *   node --import tsx bench/keygen-worker.ts <key type> <count> <timestamp> <seed> <output file>
 */
import fs from 'node:fs';
import { registrationBodies } from './keys.js';

const [keyType, count, timestamp, seed, file] = process.argv.slice(2);
if ((keyType !== 'ed25519' && keyType !== 'secp256k1') || file === undefined)
  throw new Error('usage: keygen-worker.ts <key type> <count> <timestamp> <seed> <output file>');
fs.writeFileSync(
  file,
  JSON.stringify(registrationBodies(keyType, Number(count), Number(timestamp), Number(seed))),
);
