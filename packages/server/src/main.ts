import pino from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './kernel/config.js';
import { suspiciousSettings } from './kernel/config-typos.js';
import { createContext } from './context.js';
import { listenWhileStarting } from './faces/rest/starting-listener.js';
import { explainStartupFailure } from './startup.js';
import { readBuildInfo } from './kernel/version.js';

/**
 * A start-up failure an operator can fix ends with one line saying what to do, and exit status 1;
 * the stack trace only at LOG_LEVEL=debug. Anything else is a bug and keeps its stack.
 */
function failStartup(error: unknown, config: Config | undefined): never {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  const explained = config === undefined ? undefined : explainStartupFailure(error, config);
  if (explained === undefined) {
    console.error('Cannot start the registry:', error);
  } else {
    console.error(`Cannot start the registry: ${explained}`);
    if (config?.logLevel === 'debug' || config?.logLevel === 'trace') console.error(error);
  }
  process.exit(1);
}

async function main(): Promise<void> {
  let config: Config | undefined;
  try {
    config = loadConfig();
    const log = pino({ level: config.logLevel });
    for (const { name, meant } of suspiciousSettings(process.env))
      log.warn(
        { variable: name, meant },
        `Environment variable ${name} is not a setting of the registry and is ignored; did you mean ${meant}?`,
      );
    // Live (not ready) from here on, through a migration that may take minutes.
    const starting = await listenWhileStarting(config.port, config.host, readBuildInfo());
    const ctx = await createContext(config);
    const app = await buildApp(ctx);
    let closing = false;
    const shutdown = async (signal: string): Promise<void> => {
      if (closing) return;
      closing = true;
      app.log.info({ signal }, 'shutting down: finishing in-flight requests');
      try {
        await app.close();
        await ctx.close();
        app.log.info('shutdown complete');
        process.exit(0);
      } catch (error) {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      }
    };
    process.once('SIGTERM', () => void shutdown('SIGTERM'));
    process.once('SIGINT', () => void shutdown('SIGINT'));
    try {
      await starting.close();
      await app.listen({ port: config.port, host: config.host });
    } catch (error) {
      await ctx.close().catch(() => undefined);
      throw error;
    }
    const { publicUrl } = config;
    app.log.info(
      {
        publicUrl,
        docs: `${publicUrl}/docs`,
        version: ctx.build.version,
        commit: ctx.build.commit,
        database: config.database.kind,
        didWebDomain: config.didWebDomain,
      },
      `agent registry ${ctx.build.version} ready at ${publicUrl}; API reference at ${publicUrl}/docs`,
    );
  } catch (error) {
    failStartup(error, config);
  }
}

void main();
