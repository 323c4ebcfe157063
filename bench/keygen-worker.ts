/** Child process: signs a share of the registration bodies, so both cores generate them before a run. */
import { registrationBodies } from './keys.js';

const [keyType, count, timestamp, seed] = process.argv.slice(2);
if (keyType !== 'ed25519' && keyType !== 'secp256k1')
  throw new Error('usage: keygen-worker.ts <key type> <count> <timestamp> <seed>');
process.send?.(
  { type: 'bodies', bodies: registrationBodies(keyType, Number(count), Number(timestamp), Number(seed)) },
  () => process.exit(0),
);
