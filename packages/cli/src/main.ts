import { CommanderError } from 'commander';
import { EXIT } from './exit-codes.js';
import { buildProgram } from './program.js';

const json = process.argv.includes('--json');
const program = buildProgram({ json });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Help and --version end this way too, with exit code 0.
    if (error.exitCode === 0) process.exit(0);
    if (json) {
      process.stdout.write(
        `${JSON.stringify({ error: { code: 'USAGE', message: error.message.replace(/^error: /, '') } }, null, 2)}\n`,
      );
    }
    process.exit(EXIT.usage);
  }
  const { describeFailure } = await import('./failure.js');
  const failure = describeFailure(error);
  if (json) process.stdout.write(`${JSON.stringify({ error: failure.body }, null, 2)}\n`);
  else process.stderr.write(`error: ${failure.message}\n`);
  process.exit(failure.exitCode);
}
