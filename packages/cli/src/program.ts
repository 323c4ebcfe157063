import { Command, Option } from 'commander';
import { registerApi } from './commands/api.js';
import { registerCompletion } from './commands/completion.js';
import { registerConfig } from './commands/config.js';
import { registerReputation, registerSearch, registerVerify } from './commands/discover.js';
import { registerLogin, registerRegister, registerToken, registerWhoami } from './commands/identity.js';
import { registerFederation } from './commands/federation.js';
import { registerInit } from './commands/init.js';
import { registerInvoke } from './commands/invoke.js';
import { registerKeys } from './commands/keys.js';
import { registerMirror } from './commands/mirror.js';
import { registerDomains } from './commands/domains.js';
import { registerDeactivate, registerShow, registerUpdate } from './commands/profile.js';
import { registerReview, registerReviews } from './commands/reviews.js';
import { registerTasks } from './commands/tasks.js';
import { registerValidate } from './commands/validate.js';
import { registerWorker } from './commands/worker.js';
import { registerWatch } from './commands/watch.js';
import { registerAdmin, registerAppeal, registerReport } from './commands/moderation.js';
import { withExamples } from './help.js';

export const VERSION = '0.1.0';

/** The whole command tree; `main.ts` runs it. */
export function buildProgram(options: { json?: boolean } = {}): Command {
  const program = new Command('agent-registry')
    .description(
      'Join an Agent Registry: create a key and a profile, register, serve your capabilities, find, invoke and review other agents.',
    )
    .version(VERSION, '-V, --version')
    .addOption(
      new Option(
        '--registry <url>',
        'registry base URL (default: $AGENT_REGISTRY_URL, then config.json, then http://localhost:8080)',
      ),
    )
    .option('--json', 'print one JSON document on stdout (for scripts) instead of tables')
    .showHelpAfterError('(run with --help for usage and examples)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .exitOverride();
  // With --json a usage error is reported as JSON by main.ts; commander's text would be noise.
  // Set before the subcommands are created, which copy it.
  if (options.json) program.configureOutput({ outputError: () => undefined, writeErr: () => undefined });

  registerInit(program);
  registerValidate(program);
  registerRegister(program);
  registerLogin(program);
  registerWhoami(program);
  registerToken(program);
  registerShow(program);
  registerUpdate(program);
  registerDeactivate(program);
  registerSearch(program);
  registerInvoke(program);
  registerTasks(program);
  registerWorker(program);
  registerReview(program);
  registerWatch(program);
  registerReport(program);
  registerAppeal(program);
  registerReviews(program);
  registerReputation(program);
  registerVerify(program);
  registerMirror(program);
  registerFederation(program);
  registerAdmin(program);
  registerKeys(program);
  registerDomains(program);
  registerConfig(program);
  registerApi(program);
  registerCompletion(program);

  program.addHelpText(
    'after',
    `
Files live in $AGENT_REGISTRY_HOME, else ~/.config/agent-registry: profile.json, key.json and
config.json (both mode 0600).

Exit codes: 0 ok; 1 refused or failed (registry error, invocation failed or timed out, invalid
profile); 2 usage error (bad option, bad JSON, missing file); 3 registry unreachable; 4 not
registered or not logged in, or an operator token refused (federation); 5 the transparency log
does not back what the registry served (verify, mirror).`,
  );
  withExamples(
    program,
    'agent-registry init --name "Echo" --capability echo',
    'agent-registry register',
    'agent-registry worker ./handler.mjs',
    'agent-registry search translate --min-reputation 60',
  );
  return program;
}
