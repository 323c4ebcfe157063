import fs from 'node:fs';
import type { Command } from 'commander';
import { ConfigHome, isReadableByOthers, resolveHome } from './config/home.js';
import {
  readConfig,
  resolveRegistry,
  writeConfig,
  type ConfigFile,
  type RegistrySource,
  type Session,
} from './config/settings.js';
import { Output } from './output.js';

/** Options every command accepts (declared once, on the program). */
export interface GlobalOptions {
  registry?: string;
  json?: boolean;
}

/** What a command works with: where its files are, which registry, how to print. Built per run. */
export class CliContext {
  readonly out: Output;
  readonly home: ConfigHome;
  private config: ConfigFile | undefined;

  constructor(
    readonly env: NodeJS.ProcessEnv,
    private readonly options: GlobalOptions,
  ) {
    this.out = new Output(options.json === true);
    this.home = new ConfigHome(resolveHome(env));
  }

  readConfig(): ConfigFile {
    if (this.config === undefined) {
      this.tightenConfigMode();
      this.config = readConfig(this.home);
    }
    return this.config;
  }

  /** config.json holds bearer tokens: one that others can read is made private again, with a word. */
  private tightenConfigMode(): void {
    const file = this.home.configPath;
    if (!isReadableByOthers(file)) return;
    const mode = (fs.statSync(file).mode & 0o777).toString(8);
    try {
      fs.chmodSync(file, 0o600);
      this.out.warn(
        `${file} was readable by other users (mode ${mode}) and holds your tokens; its mode is now 0600.`,
      );
    } catch (error) {
      this.out.warn(
        `${file} is readable by other users (mode ${mode}) and holds your tokens, and cannot be changed (${(error as Error).message}): run chmod 600 ${file}`,
      );
    }
  }

  saveConfig(config: ConfigFile): void {
    writeConfig(this.home, config);
    this.config = config;
  }

  registry(): { url: string; source: RegistrySource } {
    return resolveRegistry(this.options.registry, this.env, this.readConfig());
  }

  /** The DID and token obtained from the current registry, if any. */
  session(): Session | undefined {
    return this.readConfig().sessions[this.registry().url];
  }

  saveSession(session: Session): void {
    const config = this.readConfig();
    this.saveConfig({ ...config, sessions: { ...config.sessions, [this.registry().url]: session } });
  }
}

/** The context of the command being run, from its own and its parents' options. */
export const contextOf = (command: Command): CliContext =>
  new CliContext(process.env, command.optsWithGlobals<GlobalOptions>());
