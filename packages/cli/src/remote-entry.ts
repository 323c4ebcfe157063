import type { RemoteEntry } from '@agent-registry/sdk';
import type { CliContext } from './context.js';

/** The prefixes of a remote entry's id (docs/federation.md): an id with one is never a DID. */
const ENTRY_ID_PREFIXES = ['peer:', 'a2a:', 'mcp:'] as const;

/** Whether `id` names a remote entry (from `search --federated`) rather than an agent registered here. */
export function isRemoteEntryId(id: string): boolean {
  return ENTRY_ID_PREFIXES.some((prefix) => id.startsWith(prefix));
}

/** A remote entry as `show` prints it: where it lives and how it is reached there. */
export function printRemoteEntry(cli: CliContext, entry: RemoteEntry): void {
  const { provenance } = entry;
  const trust = provenance.kind === 'mirrored' ? provenance.state : provenance.verification;
  cli.out.fields([
    ['entry id', entry.id],
    ['did', entry.did ?? undefined],
    ['name', entry.name],
    ['description', entry.description ?? null],
    ['tags', entry.tags.length > 0 ? entry.tags.join(', ') : null],
    ['lives at', `${entry.home_registry} (${provenance.kind}${trust === undefined ? '' : `, ${trust}`})`],
    ['read from', provenance.source_url ?? undefined],
    ['observed', entry.observed === undefined ? undefined : entry.observed.status],
    ['note', 'a read-only entry: call and review it at its home, not through this registry'],
  ]);
  cli.out.line();
  cli.out.table(entry.endpoints, [
    { header: 'endpoint', value: (endpoint) => endpoint.type },
    { header: 'url', value: (endpoint) => endpoint.url },
  ]);
  cli.out.line();
  cli.out.table(entry.capabilities, [
    { header: 'capability', value: (capability) => capability.type },
    { header: 'description', value: (capability) => capability.description ?? '' },
  ]);
}
