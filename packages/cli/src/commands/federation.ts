import os from 'node:os';
import type {
  FederationSourceStatus as SourceStatus,
  FederationStatus,
  RegistryClient,
} from '@agent-registry/sdk';
import { isRegistryError } from '../registry-error.js';
import type { Command } from 'commander';
import { contextOf } from '../context.js';
import { CliError, EXIT, UsageError } from '../exit-codes.js';
import { withExamples } from '../help.js';
import { anonymousClient } from '../registry.js';

/** The login name, or '' where the user has no passwd entry (a container's arbitrary uid): then --by is asked for. */
function userName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return '';
  }
}

const when = (at: number | null): string | null => (at === null ? null : new Date(at).toISOString());

/**
 * An operator request with a bearer token; a refused token is exit 4 with what to pass, not the
 * agent's `login` hint.
 */
async function operatorRequest<T>(
  client: RegistryClient,
  method: 'GET' | 'POST',
  path: string,
  token: { value: string | undefined; name: string; flag: string },
  body?: unknown,
): Promise<T> {
  try {
    return await client.request<T>(method, path, {
      ...(body === undefined ? {} : { body }),
      ...(token.value === undefined ? {} : { headers: { authorization: `Bearer ${token.value}` } }),
    });
  } catch (error) {
    if (isRegistryError(error) && error.status === 401) {
      const given =
        token.value === undefined
          ? `no token was given: pass ${token.flag} or set ${token.name}`
          : `the token given (${token.flag} or ${token.name}) was not accepted`;
      throw new CliError(`${method} ${path} was refused (${error.details}); ${given}`, EXIT.auth, error.code);
    }
    throw error;
  }
}

function printSource(cli: ReturnType<typeof contextOf>, source: SourceStatus): void {
  cli.out.line(`${source.kind} ${source.url}: ${source.state}`);
  const checkpoint = source.checkpoint;
  cli.out.fields([
    ['  entries', source.entries],
    [
      '  checkpoint',
      checkpoint === undefined
        ? source.kind === 'peer'
          ? 'none verified yet'
          : undefined
        : `size ${checkpoint.size}, root ${checkpoint.root_hash} (${checkpoint.origin})`,
    ],
    ['  last error', source.last_error ?? undefined],
    ['  last attempt', when(source.last_attempt_at)],
    ['  last success', when(source.last_success_at)],
    [
      '  resumed',
      source.resumed === undefined
        ? undefined
        : `by ${source.resumed.by} at ${when(source.resumed.at)} (had stopped: ${source.resumed.reason})`,
    ],
  ]);
}

export function registerFederation(program: Command): void {
  const federation = program
    .command('federation')
    .description(
      "For a registry's operator: the peers it follows and the sources it imports (status), and resuming a peer it stopped following (resume)",
    );

  const status = federation
    .command('status')
    .description(
      "Each followed peer and import source: its state (ok, error, stopped), the last verified checkpoint of a peer, its active entries and, with the registry's METRICS_TOKEN, its last error (error texts are shown to operators only). Exit 0 whatever the states are: read them from --json",
    )
    .option(
      '--metrics-token <token>',
      "the registry's METRICS_TOKEN, for the sources' error texts (default: $METRICS_TOKEN; without it, the public summary)",
    )
    .action(async (options: { metricsToken?: string }, self: Command) => {
      const cli = contextOf(self);
      const answer = await operatorRequest<FederationStatus>(
        await anonymousClient(cli),
        'GET',
        '/api/federation/status',
        {
          value: options.metricsToken ?? cli.env.METRICS_TOKEN,
          name: 'METRICS_TOKEN',
          flag: '--metrics-token',
        },
      );
      cli.out.result(answer, () => {
        if (answer.sources.length === 0) {
          cli.out.line(
            `(${cli.registry().url} follows no peer and imports no source: see FEDERATION_PEERS in docs/federation.md)`,
          );
        }
        answer.sources.forEach((source, i) => {
          if (i > 0) cli.out.line();
          printSource(cli, source);
        });
        if (answer.view === 'public' && answer.sources.length > 0) {
          cli.out.line();
          cli.out.line(
            "(the public summary: the sources' error texts are shown with the registry's METRICS_TOKEN, --metrics-token or $METRICS_TOKEN; a registry without one writes them to its log)",
          );
        }
      });
    });
  withExamples(
    status,
    'agent-registry federation status --registry https://registry.example',
    'METRICS_TOKEN=... agent-registry federation status --json',
  );

  const resume = federation
    .command('resume')
    .description(
      "Resume following a stopped peer: the registry forgets its verified tree (and its key, unless pinned), removes the peer's entries and follows its current log from the start. Only a stopped peer is resumed",
    )
    .argument('<peer>', 'the peer origin, as FEDERATION_PEERS names it (https://peer.example)')
    .option('--by <name>', 'who resumes it, recorded on the status (default: your user name)')
    .option(
      '--admin-token <token>',
      "the registry's FEDERATION_ADMIN_TOKEN (default: $FEDERATION_ADMIN_TOKEN)",
    )
    .action(async (peer: string, options: { by?: string; adminToken?: string }, self: Command) => {
      const cli = contextOf(self);
      const token = options.adminToken ?? cli.env.FEDERATION_ADMIN_TOKEN;
      if (token === undefined || token.trim() === '') {
        throw new UsageError(
          "federation resume needs the registry's FEDERATION_ADMIN_TOKEN: pass --admin-token or set FEDERATION_ADMIN_TOKEN",
          'ADMIN_TOKEN_MISSING',
        );
      }
      const by = (options.by ?? cli.env.USER ?? userName()).trim();
      if (by === '' || by.length > 200) {
        throw new UsageError(
          options.by === undefined
            ? 'federation resume records who resumes the peer, and no user name was found: pass --by NAME'
            : '--by must name who resumes the peer in 1 to 200 characters',
          'INVALID_OPTION',
        );
      }
      const source = await operatorRequest<SourceStatus>(
        await anonymousClient(cli),
        'POST',
        '/api/federation/peers/resume',
        { value: token, name: 'FEDERATION_ADMIN_TOKEN', flag: '--admin-token' },
        { peer, by },
      );
      cli.out.result(source, () => printSource(cli, source));
    });
  withExamples(
    resume,
    'agent-registry federation resume https://peer.example --by alice --registry https://registry.example',
    'FEDERATION_ADMIN_TOKEN=... agent-registry federation resume https://peer.example --json',
  );
}
