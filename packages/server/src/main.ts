import pino from 'pino';
import type { FastifyServerFactory } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './kernel/config.js';
import { suspiciousSettings } from './kernel/config-typos.js';
import { readSettings } from './kernel/read-settings.js';
import { developmentSettingsOn } from './kernel/settings.js';
import { createContext } from './context.js';
import { listenWhileStarting } from './faces/rest/starting-listener.js';
import { explainStartupFailure } from './startup.js';
import { readBuildInfo } from './kernel/version.js';
import { Lifecycle } from './kernel/lifecycle.js';

/** A start-up failure that leaves something running past this is a bug: the process says what, and ends. */
const DRAIN_AFTER_FAILURE_MS = 10_000;

/**
 * A start-up failure an operator can fix ends with one line saying what to do, and exit status 1;
 * the stack trace only at LOG_LEVEL=debug. Anything else is a bug and keeps its stack. Whatever had
 * started is closed by then, so the process ends by itself once the line is written.
 */
function failStartup(error: unknown, config: Config | undefined): void {
  process.exitCode = 1;
  setTimeout(() => {
    console.error('Start-up failed, and left running:', process.getActiveResourcesInfo().join(', '));
    process.exit(1);
  }, DRAIN_AFTER_FAILURE_MS).unref();
  if (error instanceof ConfigError) {
    console.error(error.message);
    return;
  }
  const explained = config === undefined ? undefined : explainStartupFailure(error, config);
  if (explained === undefined) {
    console.error('Cannot start the registry:', error);
  } else {
    console.error(`Cannot start the registry: ${explained}`);
    if (config?.operations.logLevel === 'debug' || config?.operations.logLevel === 'trace')
      console.error(error);
  }
}

async function main(): Promise<void> {
  let config: Config | undefined;
  // What main itself starts (the starting listener, the context, the app), closed in reverse.
  const started = new Lifecycle();
  try {
    config = loadConfig();
    const log = pino({ level: config.operations.logLevel });
    for (const { name, meant } of suspiciousSettings(process.env))
      log.warn(
        { variable: name, meant },
        `Environment variable ${name} is not a setting of the registry and is ignored; did you mean ${meant}?`,
      );
    // loadConfig has refused any value out of range, so this second reading has no problems to tell.
    for (const { name, warning } of developmentSettingsOn(readSettings(process.env, [])))
      log.warn({ setting: name }, warning);
    // Live (not ready) from here on, through a migration that may take minutes.
    const starting = started.add(
      'listener',
      await listenWhileStarting(config.network, readBuildInfo()),
      (listener) => listener.close(),
    );
    const ctx = started.add('context', await createContext(config), (context) => context.close());
    let handler: Parameters<FastifyServerFactory>[0] | undefined;
    const serverFactory: FastifyServerFactory = (given) => {
      handler = given;
      return starting.server;
    };
    const app = started.add('app', await buildApp(ctx, { serverFactory }), (fastify) => fastify.close());
    let closing = false;
    const shutdown = async (signal: string): Promise<void> => {
      if (closing) return;
      closing = true;
      app.log.info({ signal }, 'shutting down: finishing in-flight requests');
      try {
        await started.close();
        app.log.info('shutdown complete');
        process.exit(0);
      } catch (error) {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      }
    };
    process.once('SIGTERM', () => void shutdown('SIGTERM'));
    process.once('SIGINT', () => void shutdown('SIGINT'));
    // The same listening socket goes from the starting answers to the app: the port never closes.
    await app.ready();
    if (handler === undefined) throw new Error('Fastify did not take the server');
    await starting.handOver(handler);
    // Stopping, new connections are refused first; the app then ends what is in flight.
    started.add('accepting', starting, (listener) => listener.stopAccepting());
    const { publicUrl } = config.identity;
    app.log.info(
      {
        publicUrl,
        docs: `${publicUrl}/docs`,
        version: ctx.build.version,
        commit: ctx.build.commit,
        database: config.database.kind,
        didWebDomain: config.identity.didWebDomain,
      },
      `agent registry ${ctx.build.version} ready at ${publicUrl}; API reference at ${publicUrl}/docs`,
    );
  } catch (error) {
    await started.close().catch(() => undefined);
    failStartup(error, config);
  }
}

void main();
