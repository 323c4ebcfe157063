/**
 * The command line of the accounting scripts (`--name value` options and bare `--flag`s); `npm run
 * bench` itself has its own parser (options.ts).
 */
export interface ScriptArgs {
  number(name: string, fallback: number): number;
  /** The value after `name`, or undefined when it is not given. */
  text(name: string): string | undefined;
  has(flag: string): boolean;
}

export function scriptArgs(argv: readonly string[] = process.argv.slice(2)): ScriptArgs {
  return {
    number: (name, fallback) => {
      const index = argv.indexOf(name);
      if (index === -1) return fallback;
      const value = Number(argv[index + 1]);
      if (!Number.isFinite(value)) throw new Error(`${name} needs a number`);
      return value;
    },
    text: (name) => {
      const index = argv.indexOf(name);
      return index === -1 ? undefined : argv[index + 1];
    },
    has: (flag) => argv.includes(flag),
  };
}
