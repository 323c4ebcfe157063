import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import type { Db } from '../../db/connect.js';
import { loadSigningKey } from './signing-key.js';
import { TokenService } from './tokens.js';

export interface IdentityModule {
  tokens: TokenService;
}

/** Tokens signed with TOKEN_SIGNING_KEY, or with the key the database keeps for every node. */
export async function createIdentityModule(db: Db, clock: Clock, config: Config): Promise<IdentityModule> {
  return {
    tokens: await TokenService.create({
      privateKey: await loadSigningKey(db, clock, config.identity.tokenSigningKey),
      issuer: config.identity.publicUrl,
      audience: config.identity.publicUrl,
      ttlSeconds: config.identity.tokenTtlSeconds,
      clock,
    }),
  };
}
