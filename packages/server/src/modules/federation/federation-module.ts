import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import type { Lifecycle } from '../../kernel/lifecycle.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import type { Db } from '../../db/connect.js';
import type { RegistryMetrics } from '../../telemetry/prometheus.js';
import { A2aCardImporter } from './a2a-import.js';
import { FederatedIndex } from './federated-index.js';
import { FederationService } from './federation.js';
import { startFederatedIndexLoad, startFederationJobs } from './federation-jobs.js';
import { EntryProber } from './entry-probes.js';
import { McpRegistryImporter } from './mcp-registry-import.js';
import { ObservationService } from './observations.js';
import { PeerFollower } from './peer-follower.js';
import { anyRemoteEntry } from './remote-entries-store.js';
import { readSources } from './remote-sources-store.js';
import { reportingSourceErrors } from './source-error-log.js';
import { measuringRounds } from './round-metrics.js';

export interface FederationModuleDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  metrics: RegistryMetrics;
  config: Config;
  lifecycle: Lifecycle;
  policy: WebhookNetworkPolicy;
  /** No background probe rounds of imported entries: tests run them with entryProbes.tick(). */
  manualProbes?: boolean;
}

export interface FederationModule {
  federation: FederationService;
  /** The registry's agents and remote entries in one index, for scope=federated. */
  federatedIndex: FederatedIndex;
  /** What the probes of imported entries found, and the hook for their changes. */
  observations: ObservationService;
  /** Probes of imported MCP servers and A2A card endpoints. */
  entryProbes: EntryProber;
  /** Source refreshes and the federated index's load, in the background; stopped by the lifecycle. */
  startJobs(): void;
}

export async function createFederationModule(deps: FederationModuleDeps): Promise<FederationModule> {
  const { db, clock, log, metrics, config, lifecycle, policy } = deps;
  const federatedIndex = new FederatedIndex(db, clock);
  const peers = new PeerFollower({
    db,
    clock,
    policy,
    config: config.federation,
    didWebDomain: config.identity.didWebDomain,
    onPeerStopped: (peer, reason) => {
      metrics.federationPeerStopped(peer);
      log.error(
        { peer, reason },
        'federation: peer registry no longer followed; its entries are marked unverified',
      );
    },
  });
  const a2a = new A2aCardImporter({ db, clock, policy, config: config.federation });
  const mcp = new McpRegistryImporter({ db, clock, policy, config: config.federation });
  // Each configured kind with its refresher: the kind labels its rounds' metrics.
  const kinds = [
    ...(config.federation.peers.length > 0 ? [{ kind: 'peer' as const, source: peers }] : []),
    ...(config.federation.a2aCards.length > 0 ? [{ kind: 'a2a' as const, source: a2a }] : []),
    ...(config.federation.mcpRegistries.length > 0 ? [{ kind: 'mcp' as const, source: mcp }] : []),
  ];
  const sources = kinds.map(({ source }) => source);
  const observations = new ObservationService(db);
  const onProbeFault = (error: unknown) =>
    log.error({ err: error, job: 'entry-probes' }, 'probes of imported entries failed');
  const entryProbes = new EntryProber({
    db,
    clock,
    policy,
    settings: config.entryProbes,
    budgetBytes: config.federation.maxResponseBytes,
    onChange: (changes) => observations.notify(changes, onProbeFault),
    onError: onProbeFault,
    onProbe: (finding) =>
      log.debug({ status: finding.status, reason: finding.reason }, 'federation: probed an imported entry'),
  });
  const federation = new FederationService({
    db,
    clock,
    index: federatedIndex,
    sources,
    peers,
    observations,
  });
  const anythingFederated = sources.length > 0 || (await anyRemoteEntry(db));
  return {
    federation,
    federatedIndex,
    observations,
    entryProbes,
    startJobs: () => {
      lifecycle.add(
        'probes of imported entries',
        deps.manualProbes === true ? entryProbes.stopper() : entryProbes.start(),
        (jobs) => jobs.stop(),
      );
      // Imports and peers: once now, then every FEDERATION_REFRESH_SECONDS (docs/federation.md).
      // Each new error text is logged (at info: the remote side's failure), as the public status omits them.
      const reportedSources = reportingSourceErrors(
        kinds.map(({ kind, source }) => measuringRounds(db, kind, source, metrics.operations)),
        () => readSources(db),
        (source) =>
          log.info(
            { source: source.id, state: source.state, last_error: source.last_error },
            'federation: a source reported an error',
          ),
      );
      lifecycle.add(
        'federation refreshes',
        startFederationJobs(reportedSources, config.federation.refreshMs, (error) =>
          log.error({ err: error, job: 'federation-refresh' }, 'background job failed'),
        ),
        (jobs) => jobs.stop(),
      );
      // Off the request path: in the background now when anything is federated, else on first use.
      lifecycle.add(
        'federated index load',
        startFederatedIndexLoad(
          federatedIndex,
          anythingFederated,
          (status, ms) => log.info({ indexed: status.indexed, ms }, 'federated search index loaded'),
          (error) => log.error({ err: error, job: 'federated-index' }, 'federated search index load failed'),
        ),
        (jobs) => jobs.stop(),
      );
    },
  };
}
