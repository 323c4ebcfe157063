import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { CliError, EXIT } from '../exit-codes.js';
import {
  EMPTY_FOLLOW_STATE,
  followStateFromStored,
  followStateOf,
  LogVerificationError,
  storedFollowState,
  type LogFollowState,
  type AnyLogLeaf,
  isProfileLeaf,
} from '@agent-registry/protocol';

/** The file a mirror directory holds: the verified log, its trust point and the agents' profiles. */
export const MIRROR_FILE = 'mirror.db';

/** How the mirror came to trust its verifier key. */
export type KeySource = 'flag' | 'trust-on-first-use';

export interface MirrorHead {
  registry: string;
  origin: string | null;
  verifierKey: string;
  keySource: KeySource;
  treeSize: number;
  rootHash: string;
  checkpoint: string | null;
}

export interface AppliedEntry {
  index: number;
  leafHash: Uint8Array;
  data: Uint8Array;
  leaf: AnyLogLeaf;
}

export interface AppliedProfile {
  did: string;
  leafIndex: number;
  seq: number;
  /** The served profile as JSON, or null while the registry serves a later change than the mirror holds. */
  profile: string | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS mirror_head (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  registry TEXT NOT NULL,
  origin TEXT,
  verifier_key TEXT NOT NULL,
  key_source TEXT NOT NULL,
  tree_size INTEGER NOT NULL,
  root_hash TEXT NOT NULL,
  checkpoint TEXT,
  updated_at INTEGER NOT NULL,
  follow_state TEXT
);
CREATE TABLE IF NOT EXISTS log_entries (
  leaf_index INTEGER PRIMARY KEY,
  leaf_hash BLOB NOT NULL,
  data BLOB NOT NULL,
  seq INTEGER NOT NULL,
  did TEXT NOT NULL,
  op TEXT NOT NULL,
  time INTEGER NOT NULL,
  profile_sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS log_entries_did ON log_entries (did, leaf_index);
CREATE TABLE IF NOT EXISTS agents (
  did TEXT PRIMARY KEY,
  leaf_index INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  op TEXT NOT NULL,
  profile TEXT
);
`;

type Database = BetterSqlite3.Database;

/**
 * better-sqlite3 is an optional dependency of the CLI (a native module): loaded only by `mirror`, so
 * every other command works where it could not be installed.
 */
function openDatabase(file: string): Database {
  let Driver: typeof BetterSqlite3;
  try {
    Driver = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (error) {
    throw new CliError(
      `agent-registry mirror keeps its copy in SQLite and needs the better-sqlite3 package, which could not be loaded (${(error as Error).message}): install it next to the CLI with \`npm install better-sqlite3\``,
      EXIT.usage,
      'SQLITE_UNAVAILABLE',
    );
  }
  const db = new Driver(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);
  // A mirror directory written by an earlier release kept no follow state: the column is added
  // here and followState() rebuilds it once from the stored entries.
  const columns = db.prepare('PRAGMA table_info(mirror_head)').all() as { name: string }[];
  if (!columns.some((column) => column.name === 'follow_state')) {
    db.exec('ALTER TABLE mirror_head ADD COLUMN follow_state TEXT');
  }
  return db;
}

/** A mirror directory's SQLite copy: what was verified, and nothing that was not. */
export class MirrorStore {
  private constructor(
    private readonly db: Database,
    readonly file: string,
  ) {}

  static open(dir: string): MirrorStore {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, MIRROR_FILE);
    return new MirrorStore(openDatabase(file), file);
  }

  close(): void {
    this.db.close();
  }

  head(): MirrorHead | undefined {
    const row = this.db.prepare('SELECT * FROM mirror_head WHERE id = 1').get() as
      | {
          registry: string;
          origin: string | null;
          verifier_key: string;
          key_source: KeySource;
          tree_size: number;
          root_hash: string;
          checkpoint: string | null;
        }
      | undefined;
    return row === undefined
      ? undefined
      : {
          registry: row.registry,
          origin: row.origin,
          verifierKey: row.verifier_key,
          keySource: row.key_source,
          treeSize: row.tree_size,
          rootHash: row.root_hash,
          checkpoint: row.checkpoint,
        };
  }

  /** Pins the registry and its verifier key, before anything of the log is read. */
  pin(registry: string, verifierKey: string, keySource: KeySource, emptyRoot: string): void {
    this.db
      .prepare(
        `INSERT INTO mirror_head (id, registry, origin, verifier_key, key_source, tree_size, root_hash, checkpoint, updated_at)
         VALUES (1, ?, NULL, ?, ?, 0, ?, NULL, ?)`,
      )
      .run(registry, verifierKey, keySource, emptyRoot, Date.now());
  }

  /**
   * The verified state as the protocol's follower takes it (its compact range), as stored with the
   * head; one a mirror of an earlier release lacks is rebuilt from the stored entries, checked against
   * the verified root, and stored.
   */
  followState(head: MirrorHead): LogFollowState {
    const row = this.db.prepare('SELECT follow_state FROM mirror_head WHERE id = 1').get() as
      { follow_state: string | null } | undefined;
    if (row?.follow_state != null) return followStateFromStored(JSON.parse(row.follow_state));
    if (head.treeSize === 0) return EMPTY_FOLLOW_STATE;
    const leafHashes = (
      this.db
        .prepare('SELECT leaf_hash FROM log_entries WHERE leaf_index < ? ORDER BY leaf_index')
        .raw()
        .all(head.treeSize) as [Buffer][]
    ).map(([hash]) => new Uint8Array(hash));
    const state = followStateOf(leafHashes);
    if (state.size !== head.treeSize || state.root !== head.rootHash) {
      throw new LogVerificationError(
        `${this.file} holds ${state.size} entries hashing to ${state.root}, not the ${head.treeSize} verified ones of root ${head.rootHash}: the copy was changed; start a new mirror directory`,
      );
    }
    this.db
      .prepare('UPDATE mirror_head SET follow_state = ? WHERE id = 1')
      .run(JSON.stringify(storedFollowState(state)));
    return state;
  }

  /** Everything one verified catch-up brought, in one transaction: all of it or none. */
  apply(
    head: { state: LogFollowState; checkpoint: string; origin: string },
    entries: AppliedEntry[],
    profiles: AppliedProfile[],
  ): void {
    const insertEntry = this.db.prepare(
      `INSERT INTO log_entries (leaf_index, leaf_hash, data, seq, did, op, time, profile_sha256)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const upsertAgent = this.db.prepare(
      `INSERT INTO agents (did, leaf_index, seq, op, profile) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (did) DO UPDATE SET leaf_index = excluded.leaf_index, seq = excluded.seq,
         op = excluded.op, profile = excluded.profile`,
    );
    const opOf = new Map(entries.map((entry) => [entry.index, entry.leaf.op]));
    this.db.transaction(() => {
      for (const { index, leafHash, data, leaf } of entries) {
        insertEntry.run(
          index,
          Buffer.from(leafHash),
          Buffer.from(data),
          leaf.seq,
          // An event leaf is stored under its subject, with no profile digest.
          isProfileLeaf(leaf) ? leaf.did : leaf.subject,
          leaf.op,
          leaf.time,
          isProfileLeaf(leaf) ? leaf.profile_sha256 : '',
        );
      }
      for (const profile of profiles) {
        upsertAgent.run(
          profile.did,
          profile.leafIndex,
          profile.seq,
          opOf.get(profile.leafIndex) ?? 'update',
          profile.profile,
        );
      }
      this.db
        .prepare(
          'UPDATE mirror_head SET tree_size = ?, root_hash = ?, follow_state = ?, checkpoint = ?, origin = ?, updated_at = ? WHERE id = 1',
        )
        .run(
          head.state.size,
          head.state.root,
          JSON.stringify(storedFollowState(head.state)),
          head.checkpoint,
          head.origin,
          Date.now(),
        );
    })();
  }

  /** How many agents the copy holds, and how many of them still wait for their later change's leaf. */
  counts(): { agents: number; pending: number } {
    const row = this.db
      .prepare('SELECT COUNT(*) AS agents, COUNT(*) - COUNT(profile) AS pending FROM agents')
      .get() as { agents: number; pending: number };
    return row;
  }
}
