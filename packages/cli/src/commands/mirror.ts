import type { Command } from 'commander';
import { withExamples } from '../help.js';
import type { MirrorOptions } from './mirror-run.js';

export function registerMirror(program: Command): void {
  const command = program
    .command('mirror')
    .description(
      "Keep a verified copy of the registry's transparency log and its agents' profiles in <dir>/mirror.db (SQLite): each run checks the signed checkpoint, that the log only grew since the last run (the new entries, folded into the verified tree, lead to the signed root) and checks each new agent's served profile against its leaf, and only then applies them. A rewound, forked or rewritten log, a dropped entry or a profile that is not the logged one stops it (exit 5, LOG_VERIFICATION_FAILED) and changes nothing",
    )
    .argument('<dir>', 'the mirror directory (created on first use; one registry per directory)')
    .option(
      '--verifier-key <key>',
      "the registry's log verifier key from a source you trust (default: the key pinned in <dir>; on first use, read from /log/verifier-key and pinned: trust on first use)",
    )
    .option('--no-profiles', "mirror the log's entries only, without fetching and checking profiles")
    .option('--concurrency <n>', 'profiles fetched at once', '8')
    .action(async (dir: string, options: MirrorOptions, self: Command) =>
      (await import('./mirror-run.js')).runMirror(dir, options, self),
    );
  withExamples(
    command,
    'agent-registry mirror ./registry-mirror --registry https://registry.example',
    'agent-registry mirror ./registry-mirror --registry https://registry.example --verifier-key "registry.example/log+1a2b3c4d+AX..."',
    'agent-registry mirror ./registry-mirror --registry https://registry.example --json',
  );
}
