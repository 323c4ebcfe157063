import type { Command } from 'commander';
import { ConfigHome, resolveHome } from './config/home.js';
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
    this.config ??= readConfig(this.home);
    return this.config;
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
