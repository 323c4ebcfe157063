import crypto, { type KeyObject } from 'node:crypto';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { writeSettingOnce, readSetting } from '../../db/settings.js';
import { parseEd25519PrivateKey } from '../../kernel/private-keys.js';

const SETTING_KEY = 'token_signing_key';

/**
 * The Ed25519 key that signs tokens. Given by TOKEN_SIGNING_KEY (PKCS#8 PEM or private JWK), else
 * generated once and kept in the database so every node of one registry signs with the same key.
 */
export async function loadSigningKey(
  db: Db,
  clock: Clock,
  configured: KeyObject | string | undefined,
): Promise<KeyObject> {
  if (configured !== undefined) return configuredKey(configured, 'TOKEN_SIGNING_KEY');
  return storedKey(db, clock, SETTING_KEY);
}

/**
 * The Ed25519 key that signs the transparency log's checkpoints. Given by LOG_SIGNING_KEY (PKCS#8 PEM
 * or private JWK), else generated once and kept in the database beside the token key, so every node
 * signs the same checkpoint bytes for one tree size.
 */
export async function loadLogSigningKey(
  db: Db,
  clock: Clock,
  configured?: KeyObject | string,
): Promise<KeyObject> {
  if (configured !== undefined) return configuredKey(configured, 'LOG_SIGNING_KEY');
  return storedKey(db, clock, 'transparency_log_signing_key');
}

async function storedKey(db: Db, clock: Clock, settingKey: string): Promise<KeyObject> {
  const existing = await readSetting(db, settingKey);
  if (existing !== undefined) return crypto.createPrivateKey(existing);
  const generated = crypto.generateKeyPairSync('ed25519').privateKey;
  const pem = generated.export({ format: 'pem', type: 'pkcs8' }).toString();
  return crypto.createPrivateKey(await writeSettingOnce(db, settingKey, pem, clock.now()));
}

/** loadConfig hands over the key it parsed; a key given as text (by hand, not through loadConfig) is parsed here. */
function configuredKey(configured: KeyObject | string, setting: string): KeyObject {
  const key = typeof configured === 'string' ? parseEd25519PrivateKey(configured, setting) : configured;
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`${setting} must be an Ed25519 key, got ${key.asymmetricKeyType ?? 'unknown'}`);
  return key;
}
