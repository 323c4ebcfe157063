import fs from 'node:fs';
import type { Command } from 'commander';
import { CONFIG_KEYS, normaliseRegistryUrl, type ConfigKey } from '../config/settings.js';
import { contextOf } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { withExamples } from '../help.js';

function assertKey(key: string): ConfigKey {
  if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
    throw new UsageError(
      `unknown config key "${key}"; known keys: ${CONFIG_KEYS.join(', ')}`,
      'UNKNOWN_CONFIG_KEY',
    );
  }
  return key as ConfigKey;
}

const expiry = (expiresAt: number | undefined): string =>
  expiresAt === undefined ? 'unknown' : new Date(expiresAt).toISOString();

export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description('Show or change settings: the default registry, and where files are kept');

  const list = config
    .command('list', { isDefault: true })
    .description('Show the config directory, the registry in use (and why), and saved sessions')
    .action((_options: unknown, self: Command) => {
      const cli = contextOf(self);
      const registry = cli.registry();
      const file = cli.readConfig();
      const sessions = Object.entries(file.sessions).map(([url, session]) => ({
        registry: url,
        did: session.did,
        expires_at: session.expires_at ?? null,
      }));
      const files = {
        profile: fs.existsSync(cli.home.profilePath) ? cli.home.profilePath : null,
        key: fs.existsSync(cli.home.keyPath) ? cli.home.keyPath : null,
        config: fs.existsSync(cli.home.configPath) ? cli.home.configPath : null,
      };
      cli.out.result(
        {
          home: cli.home.dir,
          registry: registry.url,
          registry_source: registry.source,
          saved: { registry: file.registry ?? null },
          files,
          sessions,
        },
        () => {
          cli.out.fields([
            ['home', cli.home.dir],
            ['registry', `${registry.url} (from ${registry.source})`],
            ['profile', files.profile ?? '(none: run `agent-registry init`)'],
            ['key', files.key ?? '(none: run `agent-registry init`)'],
          ]);
          if (sessions.length > 0) {
            cli.out.line();
            cli.out.table(sessions, [
              { header: 'registry', value: (row) => row.registry },
              { header: 'did', value: (row) => row.did, max: 90 },
              { header: 'token expires', value: (row) => expiry(row.expires_at ?? undefined) },
            ]);
          }
        },
      );
    });
  withExamples(list, 'agent-registry config', 'agent-registry config list --json');

  const get = config
    .command('get')
    .description('Print one saved setting')
    .argument('<key>', `one of: ${CONFIG_KEYS.join(', ')}`)
    .action((key: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const value = cli.readConfig()[assertKey(key)] ?? null;
      cli.out.result({ [key]: value }, () => cli.out.line(value ?? ''));
    });
  withExamples(get, 'agent-registry config get registry');

  const set = config
    .command('set')
    .description('Save a setting in config.json (mode 0600)')
    .argument('<key>', `one of: ${CONFIG_KEYS.join(', ')}`)
    .argument('<value>')
    .action((key: string, value: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const normalised = normaliseRegistryUrl(value, assertKey(key));
      cli.saveConfig({ ...cli.readConfig(), registry: normalised });
      cli.out.result({ [key]: normalised }, () => cli.out.line(`${key} = ${normalised}`));
    });
  withExamples(set, 'agent-registry config set registry https://registry.example');

  const unset = config
    .command('unset')
    .description('Remove a saved setting')
    .argument('<key>', `one of: ${CONFIG_KEYS.join(', ')}`)
    .action((key: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      assertKey(key);
      const { registry: _removed, ...rest } = cli.readConfig();
      cli.saveConfig(rest);
      cli.out.result({ [key]: null }, () => cli.out.line(`${key} removed`));
    });
  withExamples(unset, 'agent-registry config unset registry');

  const where = config
    .command('path')
    .description('Print the config directory')
    .action((_options: unknown, self: Command) => {
      const cli = contextOf(self);
      cli.out.result({ home: cli.home.dir }, () => cli.out.line(cli.home.dir));
    });
  withExamples(
    where,
    'agent-registry config path',
    'AGENT_REGISTRY_HOME=./agent-a agent-registry config path',
  );
  withExamples(
    config,
    'agent-registry config',
    'agent-registry config set registry https://registry.example',
  );
}
