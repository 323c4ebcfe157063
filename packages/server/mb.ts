// Microbenchmark: updateAgentAndStamp CPU per update on SQLite, in process.
import fs from 'node:fs';
import { openDatabase } from '/work/wt-logperf/packages/server/src/db/connect.js';
import { migrateToLatest } from '/work/wt-logperf/packages/server/src/db/migrations/index.js';
import { insertAgentIn, updateAgentAndStamp } from '/work/wt-logperf/packages/server/src/modules/agents/agent-writes-store.js';
const file = `/tmp/mb-${process.pid}.db`;
for (const f of [file, file + '-wal', file + '-shm']) fs.rmSync(f, { force: true });
const h = openDatabase({ kind: 'sqlite', path: file } as never);
await migrateToLatest(h.db);
const N = Number(process.argv[2] ?? 10000);
const now = Date.now();
for (let i = 0; i < N; i += 500) {
  await h.db.transaction().execute(async (trx) => {
    for (let j = i; j < i + 500; j++) {
      await insertAgentIn(trx, {
        did: `did:web:example.com:agents:${j}`, name: `Agent ${j}`, description: 'Translates documents', avatar: null, website: null,
        public_key: `pk-${j}`, key_id: `key-${j}`, key_type: 'ed25519', chain_id: null, referrer: null, average_rating: 0, reputation_score: 0, total_reviews: 0,
        capabilities: JSON.stringify([{ type: 'general' }]), tags: JSON.stringify(['bench']), status: 'active',
        invocation_enabled: 1, delivery_mode: 'queue', webhook_url: null, webhook_secret: null,
        created_at: now, updated_at: now,
      } as never);
    }
  });
}
const U = Number(process.argv[3] ?? 20000);
const run = async (count: number) => {
  for (let n = 0; n < count; n++) {
    const did = `did:web:example.com:agents:${(n * 7919) % 200}`;
    await updateAgentAndStamp(h.db, did, n % 4 === 0 ? { description: `Translates; revision ${n}`, tags: JSON.stringify(['bench', `rev-${n % 16}`]), updated_at: Date.now() } : { description: `Translates; revision ${n}`, updated_at: Date.now() } as never);
  }
};
await run(3000);
const c0 = process.cpuUsage(); const t0 = performance.now();
await run(U);
const c = process.cpuUsage(c0); const t = performance.now() - t0;
console.log(`${process.env.LABEL}: ${((c.user + c.system) / 1000 / U).toFixed(4)} ms CPU/update (user ${(c.user/1000/U).toFixed(4)}, sys ${(c.system/1000/U).toFixed(4)}), wall ${(t / U).toFixed(4)} ms/update`);
await h.close();
