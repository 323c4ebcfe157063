import path from 'node:path';
import {
  EMPTY_FOLLOW_STATE,
  hashLeaf,
  LogVerificationError,
  parseVerifierKey,
  type LogFollowState,
} from '@agent-registry/protocol';
import type { Command } from 'commander';
import { contextOf } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { MirrorStore, type KeySource } from '../mirror/mirror-store.js';
import { anonymousClient } from '../registry.js';

export interface MirrorOptions {
  verifierKey?: string;
  profiles: boolean;
  concurrency: string;
}

/** What `agent-registry mirror` does; loaded only when that command runs (it needs SQLite and the log code). */
export async function runMirror(dir: string, options: MirrorOptions, self: Command): Promise<void> {
  const cli = contextOf(self);
  const registry = cli.registry().url;
  const concurrency = Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new UsageError('--concurrency must be a whole number from 1 to 64', 'INVALID_OPTION');
  }
  if (options.verifierKey !== undefined) {
    try {
      parseVerifierKey(options.verifierKey);
    } catch (error) {
      throw new UsageError(`--verifier-key: ${(error as Error).message}`, 'INVALID_OPTION');
    }
  }
  const client = await anonymousClient(cli);
  const store = MirrorStore.open(dir);
  try {
    let head = store.head();
    if (head === undefined) {
      let verifierKey = options.verifierKey?.trim();
      let keySource: KeySource = 'flag';
      if (verifierKey === undefined) {
        verifierKey = (await client.request<string>('GET', '/log/verifier-key', { text: true })).trim();
        keySource = 'trust-on-first-use';
        try {
          parseVerifierKey(verifierKey);
        } catch (error) {
          throw new LogVerificationError(`${registry}/log/verifier-key: ${(error as Error).message}`);
        }
        cli.out.warn(
          `trust on first use: pinned the verifier key ${verifierKey} that ${registry} serves; compare it with the key its operator publishes. Later runs verify against this key only.`,
        );
      }
      store.pin(registry, verifierKey, keySource, EMPTY_FOLLOW_STATE.root);
      head = store.head();
    }
    if (head === undefined) throw new Error('the mirror head was not written');
    if (head.registry !== registry) {
      throw new UsageError(
        `${dir} mirrors ${head.registry}, not ${registry}: use one directory per registry`,
        'MIRROR_REGISTRY_MISMATCH',
      );
    }
    if (options.verifierKey !== undefined && options.verifierKey.trim() !== head.verifierKey) {
      throw new UsageError(
        `${dir} pinned the verifier key ${head.verifierKey}, and --verifier-key is another: a log's key does not change; if the operator announced a new one, start a new mirror directory`,
        'MIRROR_KEY_MISMATCH',
      );
    }
    const previous: LogFollowState = store.followState(head);
    let caughtUp;
    try {
      caughtUp = await client.followLog({
        verifierKey: head.verifierKey,
        state: previous,
        profiles: options.profiles,
        concurrency,
      });
    } catch (error) {
      if (error instanceof LogVerificationError) {
        throw new LogVerificationError(
          `${error.message} (${path.join(dir, 'mirror.db')} is left as verified at tree size ${head.treeSize})`,
        );
      }
      throw error;
    }
    const { state, entries, entryData, profiles, checkpoint } = caughtUp;
    const origin = checkpoint.slice(0, checkpoint.indexOf('\n'));
    store.apply(
      { state, checkpoint, origin },
      entries.map((leaf, i) => {
        const data = entryData[i] as Uint8Array;
        return { index: previous.size + i, leafHash: hashLeaf(data), data, leaf };
      }),
      profiles.map((followed) => ({
        did: followed.did,
        leafIndex: followed.leafIndex,
        seq: followed.seq,
        profile: followed.profile === null ? null : JSON.stringify(followed.profile),
      })),
    );
    const counts = store.counts();
    const result = {
      dir,
      registry,
      origin,
      tree_size: state.size,
      root_hash: state.root,
      added: entries.length,
      profiles_checked: profiles.filter((p) => p.profile !== null).length,
      agents: counts.agents,
      pending: counts.pending,
      verifier_key: head.verifierKey,
      key_source: head.keySource,
    };
    cli.out.result(result, () => {
      cli.out.fields([
        ['mirror', store.file],
        ['log', origin],
        ['tree size', `${state.size} (${entries.length} new, verified)`],
        ['root', state.root],
        ['agents', `${counts.agents} (${result.profiles_checked} profiles checked against their leaves now)`],
        [
          'pending',
          counts.pending > 0
            ? `${counts.pending} changed since the checkpoint; the next run brings them`
            : undefined,
        ],
        ['verifier key', `${head.verifierKey} (${head.keySource})`],
      ]);
    });
  } finally {
    store.close();
  }
}
