import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import type { Db } from '../../db/connect.js';
import { loadLogSigningKey } from '../identity/signing-key.js';
import type { OperationsMetrics } from '../../telemetry/operations-metrics.js';
import { NoteSigner } from './note.js';
import { TransparencyLogService } from './transparency-log.js';

export interface TransparencyLogModule {
  transparencyLog: TransparencyLogService;
}

/** The log, its checkpoints signed with LOG_SIGNING_KEY or the key the database keeps for every node. */
export async function createTransparencyLogModule(
  db: Db,
  clock: Clock,
  config: Config,
  metrics?: OperationsMetrics,
): Promise<TransparencyLogModule> {
  const { publicUrl, didWebDomain } = config.identity;
  const key = await loadLogSigningKey(db, clock, config.identity.logSigningKey);
  const transparencyLog = new TransparencyLogService({
    db,
    publicUrl,
    didWebDomain,
    signer: new NoteSigner(logOrigin(publicUrl), key),
  });
  metrics?.watchTransparencyLog(() => transparencyLog.readings(clock.now()));
  return { transparencyLog };
}

/** The log's origin (and note key name): the public URL without its scheme, with /log (C2SP tlog-tiles). */
function logOrigin(publicUrl: string): string {
  return `${publicUrl.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/+$/, '')}/log`;
}
