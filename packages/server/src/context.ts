import { loadSigningKey } from './auth/signing-key.js';
import { TokenService } from './auth/tokens.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/connect.js';
import { migrateToLatest } from './db/migrations/index.js';
import { AgentService } from './services/agents.js';
import { AuthenticationService } from './services/authentication.js';
import { DidResolutionService } from './services/did-resolution.js';
import { RegistrationService } from './services/registration.js';

/** Everything a request may need, built once here: the composition root. */
export interface AppContext {
  config: Config;
  clock: Clock;
  database: DatabaseHandle;
  tokens: TokenService;
  registration: RegistrationService;
  authentication: AuthenticationService;
  agents: AgentService;
  didResolution: DidResolutionService;
  close(): Promise<void>;
}

export interface ContextOverrides {
  clock?: Clock;
}

export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const clock = overrides.clock ?? systemClock;
  const database = openDatabase(config.database);
  try {
    await migrateToLatest(database.db);
    const privateKey = await loadSigningKey(database.db, clock, config.tokenSigningKey);
    const tokens = await TokenService.create({
      privateKey,
      issuer: config.publicUrl,
      ttlSeconds: config.tokenTtlSeconds,
      clock,
    });
    const { db } = database;
    const { didWebDomain, publicUrl } = config;
    return {
      config,
      clock,
      database,
      tokens,
      registration: new RegistrationService({ db, clock, tokens, didWebDomain }),
      authentication: new AuthenticationService({ db, clock, tokens, didWebDomain }),
      agents: new AgentService({ db, clock, didWebDomain, publicUrl }),
      didResolution: new DidResolutionService({ db, didWebDomain, publicUrl }),
      close: () => database.close(),
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
