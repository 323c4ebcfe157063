import path from 'node:path';
import type { Command } from 'commander';
import type { ProfileProblem } from '@agent-registry/protocol';
import { contextOf, type CliContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { withExamples } from '../help.js';

/** Prints problems as `path: message` lines (stderr) and fails with exit 1 when there are any. */
export function reportProfileProblems(
  cli: CliContext,
  file: string,
  problems: ProfileProblem[],
  warnings: ProfileProblem[],
): void {
  for (const warning of warnings) cli.out.warn(`${file}: ${warning.path}: ${warning.message}`);
  if (problems.length === 0) return;
  throw new CliError(
    `${file} has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems
      .map((problem) => `  ${problem.path}: ${problem.message}`)
      .join('\n')}`,
    EXIT.failed,
    'INVALID_PROFILE',
    { file, problems },
  );
}

export function registerValidate(program: Command): void {
  const command = program
    .command('validate')
    .description('Check a profile file locally, reporting every problem with its JSON path; sends nothing')
    .argument('[file]', 'profile file (default: profile.json in the config directory)')
    .option('--update', 'check it as a partial profile for `update` (every member optional)')
    .action(async (file: string | undefined, options: { update?: boolean }, self: Command) => {
      const cli = contextOf(self);
      const target = path.resolve(file ?? cli.home.profilePath);
      const mode = options.update ? 'update' : 'register';
      const { readProfileFile } = await import('../profile/check.js');
      const read = readProfileFile(target, mode);
      const { problems, warnings } = read.check;
      if (cli.out.json) {
        // One document either way; the exit code still says whether it is valid.
        cli.out.writeJson({ file: target, valid: problems.length === 0, problems, warnings });
        if (problems.length > 0) process.exitCode = EXIT.failed;
        return;
      }
      reportProfileProblems(cli, target, problems, warnings);
      cli.out.line(`${target} is a valid profile${mode === 'update' ? ' update' : ''}`);
    });
  withExamples(
    command,
    'agent-registry validate',
    'agent-registry validate ./my-agent.json --json',
    'agent-registry validate patch.json --update',
  );
}
